#!/usr/bin/env bash
# Contract test: runs Schemathesis against `licensing-sim` for both specs (spec/order.yaml,
# spec/member.yaml) and its sandbox admin API (sim/spec/sandbox.yaml) with every check, in the examples, coverage, fuzzing and stateful
# phases. Any response that does not match the spec fails the script.
#
# Bounded for CI (2 cores): SCHEMATHESIS_MAX_EXAMPLES cases per operation and phase
# (default 100). A run takes about two
# minutes once the simulator is built.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly SCHEMATHESIS_VERSION=4.32.5
readonly VENV=target/schemathesis-venv
readonly WORK=target/schemathesis
readonly MAX_EXAMPLES=${SCHEMATHESIS_MAX_EXAMPLES:-100}

readonly SEED=${SCHEMATHESIS_SEED:-20260101}

fail() {
    echo "schemathesis.sh: $*" >&2
    exit 1
}

# --- Schemathesis, pinned, in a venv under target/ -------------------------------------
if [[ "$("$VENV/bin/schemathesis" --version 2>/dev/null || true)" != *"version $SCHEMATHESIS_VERSION"* ]]; then
    echo "installing schemathesis $SCHEMATHESIS_VERSION into $VENV" >&2
    python3 -m venv --clear "$VENV" || fail "cannot create a Python venv (python3 -m venv)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" ||
        fail "cannot install schemathesis $SCHEMATHESIS_VERSION from PyPI"
fi

# --- the simulator, on a free port ---------------------------------------------------------
cargo build --quiet --locked -p licensing-sim --features bin --bin licensing-sim || fail "cannot build licensing-sim"
# Wherever cargo puts its output (CARGO_TARGET_DIR included).
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
mkdir -p "$WORK"
sim_pid=
cleanup() {
    if [[ -n $sim_pid ]] && kill -0 "$sim_pid" 2>/dev/null; then
        kill "$sim_pid" 2>/dev/null || true
        wait "$sim_pid" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$target_dir/debug/licensing-sim" --addr 127.0.0.1:0 >"$WORK/sim.out" 2>"$WORK/sim.log" &
sim_pid=$!

url=
for _ in $(seq 1 100); do
    url=$(sed -n 's/^listening on //p' "$WORK/sim.out")
    [[ -n $url ]] && break
    if ! kill -0 "$sim_pid" 2>/dev/null; then
        cat "$WORK/sim.log" >&2
        fail "licensing-sim exited before listening"
    fi
    sleep 0.1
done
[[ -n $url ]] || fail "licensing-sim did not print 'listening on' within 10 s"
echo "licensing-sim listening on $url" >&2

# --- Schemathesis against each spec -------------------------------------------------------
# Hypothesis keeps its caches here rather than in the work tree.
export HYPOTHESIS_STORAGE_DIRECTORY="$WORK/hypothesis"
run() {
    local spec=$1 file=$2
    shift 2
    echo "== schemathesis: $file ==" >&2
    "$VENV/bin/schemathesis" --config-file .ci/schemathesis.toml run "$file" \
        --url "$url" \
        --phases examples,coverage,fuzzing,stateful \
        --checks all \
        --continue-on-failure \
        --suppress-health-check data_too_large \
        --max-examples "$MAX_EXAMPLES" \
        --seed "$SEED" \
        --workers 1 \
        --request-timeout 10 \
        --report junit --report-dir "$WORK/$spec" \
        "$@"
}

status=0
# The order document requires `Content-Type: application/json` on every request,
# bodiless ones included (the simulator answers 13004 without it).
run order spec/order.yaml \
    --header "Authorization: Bearer sim-app-token" \
    --header "Content-Type: application/json" || status=1
run member spec/member.yaml \
    --header "Authorization: Bearer sim-client-token" \
    --header "clientToken: sim-client-token" \
    --header "userToken: sim-user-token" || status=1
# Last: the admin API resets and replaces the state the runs above worked on. The
# `recording` routes are the conformance proxy's, not the simulator's (licensing-proxy's
# proxy/tests/proxy covers them).
run sandbox sim/spec/sandbox.yaml --exclude-tag recording || status=1

kill -0 "$sim_pid" 2>/dev/null || fail "licensing-sim died during the run (see $WORK/sim.log)"
[[ $status -eq 0 ]] || fail "Schemathesis reported failures (reports in $WORK/)"
echo "schemathesis.sh: all three specs passed" >&2
