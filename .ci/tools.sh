#!/usr/bin/env bash
# The tools CI builds from crates.io, built once per machine into $LICENSING_CI_CACHE/bin
# (default ~/.cache/licensing-ci/bin, outside the clone, so that a later clone on the same
# machine finds them): cargo-semver-checks (.ci/semver.sh). A tool of another version than
# the one pinned is built again. .ci/semver.sh calls it only when the API it checks has
# changed since cargo-semver-checks last passed it (.ci/api/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cache=${LICENSING_CI_CACHE:-$HOME/.cache/licensing-ci}
semver_version=$(sed -nE 's/^version=([0-9.]+)$/\1/p' .ci/semver.sh)
[ -n "$semver_version" ] || { echo "tools.sh: cannot read the pinned versions" >&2; exit 1; }

install() { # NAME VERSION VERSION-COMMAND EXPECTED-VERSION-LINE [cargo install options]
  local name=$1 version=$2 check=$3 expected=$4
  shift 4
  if [[ $(PATH="$cache/bin:$PATH" $check 2>/dev/null | head -n 1) == "$expected"* ]]; then
    echo "$name $version: cached in $cache/bin"
    return
  fi
  local begin=$SECONDS
  echo "building $name $version into $cache (once per machine)"
  # Without link-time optimisation, at a low opt-level and without debug info: they build
  # in about half the time, and their speed is nothing beside what they check.
  CARGO_TARGET_DIR="$cache/build" CARGO_PROFILE_RELEASE_LTO=false \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_DEV_DEBUG=0 \
    cargo install --quiet --locked --root "$cache" "$@" "$name@$version"
  echo "$name $version built in $((SECONDS - begin)) s"
}
install cargo-semver-checks "$semver_version" "cargo semver-checks --version" \
  "cargo-semver-checks $semver_version"
# Their intermediate files are of no further use (several hundred MB).
rm -rf "$cache/build"
