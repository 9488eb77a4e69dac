#!/usr/bin/env bash
# The API-change check: cargo semver-checks compares the public API of licensing-sdk and
# licensing-sim with the last released surface, the sources of the commit that last
# changed .ci/api-baseline (see that file). licensing-codegen is left out: licensing-sdk
# requires it with `=` and nothing else uses it, so its API has no semver promise to keep.
#
# cargo-semver-checks is the slowest tool CI builds (minutes on 2 cores), so the check
# runs only when what it checks has changed: `.ci/api/` keeps the public API of both crates
# as cargo-semver-checks last passed it (one item a line, by `cargo xtask api-surface`),
# with the baseline and the tool's version it passed against (`.ci/api/checked`). When the
# current listings, the baseline and the pinned version all match that record, the verdict
# cannot differ and the tool is not built. Otherwise it is built and run; on a pass,
# `bash .ci/semver.sh --record` writes the new record (a reviewed change: the listings'
# diff is the API's); without `--record` a pass with a stale record warns, naming that
# command.
#
# The listings themselves cost the rustdoc JSON of the workspace (most of this step's
# time), so the record also keeps a digest of everything they are made of (`cargo xtask
# api-inputs`, xtask/src/api_inputs.rs: the toolchain, Cargo.lock and the members'
# manifests, this script and the listing code, and every file the two crates and the
# workspace packages they build on ship). While it matches, nothing is documented: the
# listings would be the recorded ones. When it does not and the listings are unchanged,
# `--record` writes the new digest without building the tool. xtask's tests change each
# kind of input and check that the digest moves (and that it does not for a file the
# crates do not ship).
#
# cargo-semver-checks reads rustdoc's JSON output (unstable, enabled on the stable toolchain
# with RUSTC_BOOTSTRAP=1, as cargo-semver-checks does itself). Both sides are documented
# here with the workspace's features unified as clippy and the docs unify them (`--workspace
# --all-features`), in their target directory ($SEMVER_TARGET_DIR, default
# `$CARGO_TARGET_DIR-check`, or `target/check`): what CI's clippy and docs checked is not
# checked again, and the baseline's sources (exported from git) share it too. The listing
# job runs in the main target directory (`cargo xtask`, as CI's other jobs), or is the binary
# SEMVER_XTASK names.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
version=0.51.0
record=no
[[ ${1:-} == --record ]] && record=yes

fail() {
    echo "semver.sh: $*" >&2
    exit 1
}

install_tool() {
    local cache=${LICENSING_CI_CACHE:-$HOME/.cache/licensing-ci}
    bash .ci/tools.sh
    export PATH="$cache/bin:$PATH"
}

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

# The listings are made by the main target directory's xtask (outside the lane's
# RUSTC_BOOTSTRAP). In CI's lane CARGO_TARGET_DIR is the check directory, `<main>-check`.
main_target=${SEMVER_MAIN_TARGET_DIR:-}
if [[ -z $main_target && ${CARGO_TARGET_DIR:-} == *-check ]]; then
    main_target=${CARGO_TARGET_DIR%-check}
fi
main_target=${main_target:-$PWD/target}
# Or, given SEMVER_XTASK, that binary (CI passes its test build's: `cargo xtask` would
# build xtask again with its own features, about 45 s on 2 cores).
xtask() {
    if [[ -n ${SEMVER_XTASK:-} ]]; then
        env -u RUSTC_BOOTSTRAP "$SEMVER_XTASK" "$@"
    else
        env -u RUSTC_BOOTSTRAP CARGO_TARGET_DIR="$main_target" cargo xtask "$@"
    fi
}

inputs=$(xtask api-inputs)
says() { printf 'baseline = %s\ncargo-semver-checks = %s\n' "$baseline" "$version"; }
recorded=$(grep -E '^(baseline|cargo-semver-checks) = ' .ci/api/checked 2>/dev/null || true)
recorded_inputs=$(sed -n 's/^inputs = //p' .ci/api/checked 2>/dev/null || true)
if [[ $recorded == "$(says)" && $recorded_inputs == "$inputs" ]]; then
    echo "semver.sh: nothing the public API listings are made of changed since cargo-semver-checks $version passed them against $(git log -1 --format=%h "$baseline") (.ci/api/checked: inputs = $inputs), so they are not made again, nor the check run; in $((SECONDS - started)) s" >&2
    exit 0
fi
write_record() {
    mkdir -p .ci/api
    cp "$work/current/licensing_sdk.txt" "$work/current/licensing_sim.txt" .ci/api/
    {
        echo "# Written by \`bash .ci/semver.sh --record\` after cargo-semver-checks passed the API in"
        echo "# licensing_sdk.txt and licensing_sim.txt against this baseline (see .ci/semver.sh);"
        echo "# inputs: the digest of what those listings are made of (cargo xtask api-inputs)."
        says
        echo "inputs = $inputs"
    } >.ci/api/checked
    echo "semver.sh: recorded in .ci/api/ (commit it with the change)" >&2
}

# rustdoc's JSON of the workspace at DIR, the two checked crates' copied to OUT.
document() {
    local dir=$1 out=$2
    (cd "$dir" && CARGO_TARGET_DIR=$target RUSTC_BOOTSTRAP=1 \
        RUSTDOCFLAGS="-Z unstable-options --output-format json" \
        cargo doc --quiet --locked --workspace --no-deps --all-features)
    cp "$target/doc/licensing_sdk.json" "$target/doc/licensing_sim.json" "$out/"
}
document . "$work/current"

# The listings.
for crate in licensing_sdk licensing_sim; do
    xtask api-surface "$work/current/$crate.json" "$work/current/$crate.txt"
done
unchanged=yes
for crate in licensing_sdk licensing_sim; do
    cmp -s "$work/current/$crate.txt" ".ci/api/$crate.txt" || unchanged=no
done
if [[ $unchanged == yes && $recorded == "$(says)" ]]; then
    echo "semver.sh: the public API of licensing-sdk and licensing-sim is the one cargo-semver-checks $version passed against $(git log -1 --format=%h "$baseline") (.ci/api/), so the check is not run again; in $((SECONDS - started)) s" >&2
    if [[ $record == yes ]]; then
        write_record
    else
        echo "semver.sh: WARNING: what the listings are made of changed (inputs = $inputs, not the recorded $recorded_inputs); \`bash .ci/semver.sh --record\` and a commit of .ci/api/checked spare the next run the documentation" >&2
    fi
    exit 0
fi
if [[ $unchanged == no ]]; then
    echo "== the public API changed since .ci/api/ was recorded: ==" >&2
    for crate in licensing_sdk licensing_sim; do
        recorded=.ci/api/$crate.txt
        [[ -f $recorded ]] || recorded=/dev/null
        diff -u "$recorded" "$work/current/$crate.txt" --label "recorded $crate" \
            --label "current $crate" | head -n 200 | sed -e 's/^/  /' >&2 || true
    done
fi
install_tool
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
if [[ $record == yes ]]; then
    write_record
else
    # Not a failure: the API is sound. But until the record is committed every run builds
    # and runs the tool again, which the step's time shows.
    echo "semver.sh: WARNING: .ci/api/ does not record this API (above) or names another baseline or version; \`bash .ci/semver.sh --record\` and a commit of .ci/api/ spare the next run this check" >&2
fi
echo "semver.sh: no breaking change since the last release, in $((SECONDS - started)) s" >&2
