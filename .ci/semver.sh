#!/usr/bin/env bash
# The API-change check: cargo semver-checks compares the public API of licensing-sdk and
# licensing-sim with the last released surface, the sources of the commit that last
# changed .ci/api-baseline (see that file). licensing-codegen is left out: licensing-sdk
# requires it with `=` and nothing else uses it, so its API has no semver promise to keep.
#
# cargo-semver-checks reads rustdoc's JSON output (unstable, enabled on the stable toolchain
# with RUSTC_BOOTSTRAP=1, as cargo-semver-checks does itself). Both sides are documented
# here with the workspace's features unified as clippy and the docs unify them (`--workspace
# --all-features`), in their target directory ($SEMVER_TARGET_DIR, default
# `$CARGO_TARGET_DIR-check`, or `target/check`): what CI's clippy and docs checked is not
# checked again, and the baseline's sources (exported from git) share it too. cargo
# semver-checks itself is installed once per machine by .ci/tools.sh, or here when missing.
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

if [[ -n ${SEMVER_TARGET_DIR:-} ]]; then
    target=$SEMVER_TARGET_DIR
elif [[ -n ${CARGO_TARGET_DIR:-} ]]; then
    target=$CARGO_TARGET_DIR-check
else
    target=$PWD/target/check
fi
target=$(realpath -m "$target")
work=$target/semver
rm -rf "$work"
mkdir -p "$work/baseline-src" "$work/baseline" "$work/current"
git archive "$baseline" | tar -x -C "$work/baseline-src"

# rustdoc's JSON of the workspace at DIR, the two checked crates' copied to OUT.
document() {
    local dir=$1 out=$2
    (cd "$dir" && CARGO_TARGET_DIR=$target RUSTC_BOOTSTRAP=1 \
        RUSTDOCFLAGS="-Z unstable-options --output-format json" \
        cargo doc --quiet --locked --workspace --no-deps --all-features)
    cp "$target/doc/licensing_sdk.json" "$target/doc/licensing_sim.json" "$out/"
}
document . "$work/current"
document "$work/baseline-src" "$work/baseline"

# The release type follows the versions: 0.1.x after 0.1.0 is a minor release, where a
# breaking change fails; 0.2.0 is a major one, where it is expected.
manifest_version() { sed -nE 's/^version = "([0-9]+\.[0-9]+\.[0-9]+).*"$/\1/p' "$1" | head -n 1; }
status=0
for package in sdk sim; do
    manifest=$([[ $package == sdk ]] && echo Cargo.toml || echo sim/Cargo.toml)
    old=$(manifest_version "$work/baseline-src/$manifest")
    new=$(manifest_version "$manifest")
    IFS=. read -r old_major old_minor _ <<<"$old"
    IFS=. read -r new_major new_minor _ <<<"$new"
    if ((new_major > old_major)) || ((old_major == 0 && new_minor > old_minor)); then
        release=major
    else
        release=minor
    fi
    echo "== licensing-$package $old -> $new: checked as a $release release ==" >&2
    if ! cargo semver-checks --baseline-rustdoc "$work/baseline/licensing_$package.json" \
        --current-rustdoc "$work/current/licensing_$package.json" \
        --release-type "$release" 2>&1 | sed -e 's/^/  /'; then
        status=1
    fi
done
((status == 0)) ||
    fail "a breaking change against the last released API (above): bump the version in Cargo.toml and say it in CHANGELOG.md"
echo "semver.sh: no breaking change since the last release, in $((SECONDS - started)) s" >&2
