#!/usr/bin/env bash
# The API-change check: cargo semver-checks compares the public API of licensing-sdk and
# licensing-sim with the last released surface, the sources of the commit that last
# changed .ci/api-baseline (see that file). licensing-codegen is left out: licensing-sdk
# requires it with `=` and nothing else uses it, so its API has no semver promise to keep.
# cargo-semver-checks reads rustdoc's JSON output, which it gets from the stable toolchain
# itself; it is installed from crates.io (pinned) when missing or of another version.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
version=0.51.0

fail() {
    echo "semver.sh: $*" >&2
    exit 1
}

if [[ $(cargo semver-checks --version 2>/dev/null) != "cargo-semver-checks $version" ]]; then
    echo "== installing cargo-semver-checks $version (once per machine) ==" >&2
    install_started=$SECONDS
    # Built for this check only: without link-time optimisation and at opt-level 1 it
    # builds in about half the time and still checks two crates in seconds.
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0 \
        cargo install --quiet --locked "cargo-semver-checks@$version"
    echo "installed in $((SECONDS - install_started)) s" >&2
fi

baseline=$(git log -1 --format=%H -- .ci/api-baseline)
[[ -n $baseline ]] || fail "no commit changed .ci/api-baseline: is this a shallow clone?"
echo "== cargo semver-checks against $(git log -1 --format='%h (%cs)' "$baseline") ==" >&2
# The release type follows the versions: 0.1.x after 0.1.0 is a minor release, where a
# breaking change fails; 0.2.0 is a major one, where it is expected.
if ! cargo semver-checks --package licensing-sdk --package licensing-sim \
    --baseline-rev "$baseline" 2>&1 | sed -e 's/^/  /'; then
    fail "a breaking change against the last released API (above): bump the version in Cargo.toml and say it in CHANGELOG.md"
fi
echo "semver.sh: no breaking change since the last release, in $((SECONDS - started)) s" >&2
