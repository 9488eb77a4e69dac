#!/usr/bin/env bash
# The benchmark's set-up where cargo is told to build elsewhere: `cargo xtask bench
# --smoke` (the lab in bench/) with CARGO_TARGET_DIR set to a directory other than
# target/ (the caller's, or a fresh one). It builds the simulator and the benchmarks
# (debug, the whole workspace selected, so with the features `cargo test --workspace`
# unifies: after CI's tests in the same directory nothing is compiled again), finds every binary through cargo's JSON messages and `cargo metadata`, starts
# licensing-sim and the bare servers, runs each path once at its smallest size (SDK
# overhead, throughput load, batch client side, simulator side and round trip, paging,
# the hostile reply, bulk submit, the proxy, the seeds), checks the results, writes their
# record into that directory and renders it in memory; nothing is timed, and nothing is
# written outside that directory. Then it checks that every binary it ran came from there.
# Needs: cargo (the rest builds from the lock file).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# A CARGO_TARGET_DIR the caller set (other than target/) is used as it is: the run then
# reuses what was built there. Otherwise a fresh directory, removed afterwards.
if [ -n "${CARGO_TARGET_DIR:-}" ] && [ "$(realpath -m "$CARGO_TARGET_DIR")" != "$(realpath -m target)" ]; then
  dir=$(realpath -m "$CARGO_TARGET_DIR")
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/licensing-bench-smoke.XXXXXX")
  log="$dir.log"
  trap 'rm -rf "$dir" "$log"' EXIT
fi

started=$SECONDS
CARGO_TARGET_DIR="$dir" cargo --locked xtask bench --smoke 2>&1 | tee "$log"

# Every binary the run used is under the chosen directory, not under target/.
used=$(grep -c '^using ' "$log" || true)
outside=$(grep '^using ' "$log" | grep -v "^using $dir/" || true)
if [ "$used" -lt 5 ] || [ -n "$outside" ]; then
  echo "bench smoke: expected 5 binaries under $dir, got $used; outside it:" >&2
  echo "$outside" >&2
  exit 1
fi
echo "bench smoke: passed in $((SECONDS - started)) s with CARGO_TARGET_DIR=$dir"
