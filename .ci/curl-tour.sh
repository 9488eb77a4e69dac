#!/usr/bin/env bash
# Runs the curl tour of sim/README.md (the ```sh block after `<!-- curl-tour -->`) exactly
# as written, and checks what its steps print: the fault is seen, the state survives the
# restart.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v curl >/dev/null; then
  apt-get install -y -qq curl >/dev/null || { apt-get update -qq && apt-get install -y -qq curl >/dev/null; }
fi

tour=$(awk '/<!-- curl-tour -->/{found=1; next} found && /^```sh$/{inblock=1; next} inblock && /^```$/{exit} inblock' sim/README.md)
[ -n "$tour" ] || { echo "curl-tour.sh: no tour found in sim/README.md" >&2; exit 1; }
# The tour runs the binary where cargo puts it by default; CI builds elsewhere
# (CARGO_TARGET_DIR), so the same path is read there.
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
  tour=${tour//target\/debug\//$CARGO_TARGET_DIR/debug/}
fi
out=$(bash -euo pipefail -c "$tour" 2>&1) || { echo "$out"; echo "curl-tour.sh: the tour failed" >&2; exit 1; }
echo "$out"
check() {
  grep -qF -- "$1" <<<"$out" || { echo "curl-tour.sh: the tour did not print $1" >&2; exit 1; }
}
check '"data":["8000000004","8000000005"]'
check '"code":"500"'
check '"fault":1'
check '"data":["8000000006"]'
grep -q '"enterprises"' /tmp/licensing-sim-export.json || grep -q '"state"' /tmp/licensing-sim-export.json ||
  { echo "curl-tour.sh: the export holds no state" >&2; exit 1; }
echo "curl-tour.sh: the tour works as written"
