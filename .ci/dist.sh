#!/usr/bin/env bash
# The packages for pip and npm, checked as a partner without a Rust toolchain installs
# them: `cargo xtask dist --check` (clients/sandbox/README.md) builds the licensing-sandbox
# wheel and npm packages and the licensing-client ones into target/dist/, installs each in
# a fresh venv and a fresh npm project from those files alone with no cargo or rustc on
# PATH, and runs the example suites (a partner story, a clean state per test, the clock, a
# fault, the coverage report, no simulator left running after a failing test, Ctrl-C or a
# killed runner), the clients' scenario, and the pip and npm commands of README.md and
# docs/other-languages.md as they are written.
#
# The binaries: `--binaries DIR` packs the ones a build made already (LICENSING_DIST_BINARIES;
# .ci/run passes its test build's, $CARGO_TARGET_DIR/debug, copied aside first so that a
# later build cannot change them mid-run), else `dist` builds them in release (minutes).
# Needs: cargo, node (>= 20) with npm, python3 (>= 3.11) with venv, strip; binutils and
# python3-venv are installed from Debian when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=$SECONDS
fail() {
  echo "dist.sh: $*" >&2
  exit 1
}

missing=()
command -v strip >/dev/null || missing+=(binutils)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian's ${missing[*]}"
  apt-get install -y -qq "${missing[@]}" >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
    fail "cannot install ${missing[*]}"
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  fail "python3 is $(python3 --version 2>&1), the packages need 3.11 or later"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' ||
  fail "node is $(node --version 2>&1), the packages need 20 or later"
command -v npm >/dev/null || fail "npm is not installed"

args=(--check)
if [ -n "${LICENSING_DIST_BINARIES:-}" ]; then
  for program in licensing-sim licensing-proxy licensing; do
    [ -x "$LICENSING_DIST_BINARIES/$program" ] || fail "$LICENSING_DIST_BINARIES/$program is missing"
  done
  args+=(--binaries "$LICENSING_DIST_BINARIES")
fi

echo "\$ cargo xtask dist ${args[*]}"
cargo --locked xtask dist "${args[@]}"
echo "dist.sh: the packages and their checks passed in $((SECONDS - started)) s"
