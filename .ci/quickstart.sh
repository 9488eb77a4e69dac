#!/usr/bin/env bash
# README command 1 (the quickstart against the embedded simulator), verbatim, with its
# output checked: it must pass and its build must have no warnings. Its build has the
# features a partner's has (the simulator without TLS), which clippy's `--all-features`
# never compiles: a warning there is a partner's first sight of us.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cmd=$(awk '/^```sh$/{inblock=1; next} inblock && /^```$/{exit} inblock' README.md | sed -n 1p)
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
echo "\$ $cmd"
eval "$cmd" >"$out" 2>"$err" || { cat "$out" "$err" >&2; echo "quickstart.sh: README command 1 failed" >&2; exit 1; }
tail -n 5 "$out"
if grep -q '^warning' "$err"; then
  cat "$err" >&2
  echo "quickstart.sh: the quickstart's build has warnings (above)" >&2
  exit 1
fi
