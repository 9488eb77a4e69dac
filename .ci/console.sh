#!/usr/bin/env bash
# The simulator's sandbox console in real browsers, against a running licensing-sim.
#
# Chromium: `cargo xtask console` (journal within one second, copy as cURL run in a
# shell, a fault added through the form, reset asking first, labelled controls, no
# console errors, no request leaving the simulator's origin; the tenants: the
# simulator's picker, and a tenant's admin token opening that tenant's pages alone). It
# adds about 30 s to CI when the binaries are already built by the test step (npm ci of
# the lock file, cargo builds that find nothing to do, 21 s in the browser on 2 busy
# cores).
#
# Firefox: `cargo xtask console --browser firefox` (the same, signed in with an admin
# token through a session whose changes need x-sandbox-csrf, over WebDriver BiDi: the
# puppeteer-core of the Chromium check's lock file speaks it to the browser itself, so
# after the Chromium check nothing is built or installed for it). With the cargo builds
# done, 14 to 23 s on 2 busy cores (load 6 to 12), almost all of it in the browser.
# Debian's firefox-esr is installed here when missing.
#
# Both browsers are Debian's packages.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

install() {
  apt-get install -y -qq "$@" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$@" >/dev/null; }
}
if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  echo "installing Debian's chromium package"
  install chromium
fi
if [ -z "${FIREFOX:-}" ] && ! command -v firefox-esr >/dev/null; then
  echo "installing Debian's firefox-esr package"
  install firefox-esr
fi

started=$SECONDS
cargo xtask console
echo "console.sh: the console passed in Chromium in $((SECONDS - started)) s"
started=$SECONDS
cargo xtask console --browser firefox
echo "console.sh: the console passed in Firefox in $((SECONDS - started)) s"
