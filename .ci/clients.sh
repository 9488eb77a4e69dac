#!/usr/bin/env bash
# Other languages and the API reference, from a fresh clone:
#
#   1. `cargo xtask clients --test`: TypeScript (openapi-typescript + openapi-fetch) and
#      Python (openapi-python-client with the shipped templates) clients generated from
#      spec/*.yaml, each driving all 19 operations against its own licensing-sim, with the
#      simulator's journal checked afterwards, then the TypeScript and Python examples of
#      docs/other-languages.md, run as written and their printed output checked (an alias
#      of `cargo run -p licensing-clients -- --test`; see clients/README.md); and the Go
#      module clients/go: its oapi-codegen packages regenerated and compared with the
#      committed ones, `go vet`, `go test ./...` (every operation, the partner story, the
#      sandbox package, a killed test binary) and the guide's Go example, its module made
#      with the guide's `go get`;
#      beside them, the Java suite: `mvn -q verify` in clients/java (openapi-generator's
#      Java client generated at build time, the helper, the JUnit 5 extension, every
#      operation and the partner story against licensing-sim, a JVM killed with SIGKILL
#      leaving no simulator, the guide's Java blocks; see clients/java/README.md);
#   2. `cargo xtask docs --check`: the reference pages of the three specs rendered by
#      Redocly, opened in headless Chromium, every operation id and error code checked in the
#      rendered DOM, one screenshot per page (paths printed below).
#
# The Node and Python packages come from the lock files under clients/ and xtask/docs/
# (installed into the target directory); Chromium is Debian's package, installed here when
# missing.
# Go's modules and build cache live under the CI cache ($LICENSING_CI_CACHE/go), kept for
# the next run on the machine.
# Needs: cargo, node (>= 20.19) with npm, python3 (>= 3.10) with venv, go (>= 1.26), apt-get
# for Chromium.
# Java 17 and Maven 3.8 are Debian's openjdk-17-jdk-headless and maven, installed when
# missing; what Maven downloads is kept under the CI cache ($LICENSING_CI_CACHE/maven), so
# later runs on the machine download nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=$SECONDS
timed() {
  local begin=$SECONDS
  echo "\$ $*"
  "$@"
  echo "($* took $((SECONDS - begin)) s)"
}

if ! command -v go >/dev/null; then
  echo "clients.sh: go not found: the Go client (clients/go) needs Go 1.26 or later on PATH" >&2
  exit 1
fi
go_cache=${LICENSING_CI_CACHE:-$HOME/.cache/licensing-ci}/go
export GOMODCACHE=${GOMODCACHE:-$go_cache/mod} GOCACHE=${GOCACHE:-$go_cache/build}

if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  echo "installing Debian's chromium package"
  apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
fi

missing=()
command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian's ${missing[*]}"
  apt-get install -y -qq "${missing[@]}" >/dev/null || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi
export LICENSING_MAVEN_REPO=${LICENSING_MAVEN_REPO:-${LICENSING_CI_CACHE:-$HOME/.cache/licensing-ci}/maven}

timed cargo xtask clients --test
timed cargo xtask docs --check

target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
echo "screenshots (CI artifacts):"
ls -1 "$target_dir"/docs/*.png
echo "clients.sh: the TypeScript, Python and Go clients and the reference pages passed in $((SECONDS - started)) s"
