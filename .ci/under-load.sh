#!/usr/bin/env bash
# The test suite (README command 2) N times in a row (default 3) while two busy loops keep
# both cores of a 2-core machine occupied: the proof that no test depends on a quiet
# machine. Not part of `.ci/run` (it triples the test time); run it after changing a test
# that waits on time. Prints each run's time and the load average seen.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}

loops=()
stop_loops() {
  local pid
  for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_loops EXIT

# Built first, unloaded: the question is whether the tests pass, not how long cargo takes.
cargo test --workspace --locked --no-run -q

for _ in 1 2; do
  (while :; do :; done) &
  loops+=($!)
done

for run in $(seq 1 "$runs"); do
  begin=$SECONDS
  if ! cargo test --workspace --locked -q >"${TMPDIR:-/tmp}/under-load-$run.log" 2>&1; then
    grep -E "^(test .* FAILED|failures:|---- )" "${TMPDIR:-/tmp}/under-load-$run.log" >&2 || true
    echo "under-load.sh: run $run of $runs FAILED beside two busy loops (log: ${TMPDIR:-/tmp}/under-load-$run.log)" >&2
    exit 1
  fi
  passed=$(grep -oE '[0-9]+ passed' "${TMPDIR:-/tmp}/under-load-$run.log" | awk '{n += $1} END {print n}')
  echo "under-load.sh: run $run of $runs passed ($passed tests) in $((SECONDS - begin)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "under-load.sh: $runs runs in a row passed beside two busy loops"
