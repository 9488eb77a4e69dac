#!/usr/bin/env bash
# The simulator's sandbox console in a real browser: `cargo xtask console` drives it in
# headless Chromium against a running licensing-sim (journal within one second, copy as
# cURL run in a shell, a fault added through the form, reset asking first, labelled
# controls, no console errors, no request leaving the simulator's origin). It adds about
# 15 s to CI when the binaries are already built by the test step (npm ci of
# playwright-core, two cargo builds that find nothing to do, about 7 s in the browser).
# Chromium is Debian's package, installed here when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  echo "installing Debian's chromium package"
  apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
fi

started=$SECONDS
cargo xtask console
echo "console.sh: the console passed in a browser in $((SECONDS - started)) s"
