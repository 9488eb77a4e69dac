#!/usr/bin/env bash
# Contract test: runs Schemathesis against `licensing-sim` for both specs (spec/order.yaml,
# spec/member.yaml) and its sandbox admin API (sim/spec/sandbox.yaml) with every check, in the examples, coverage, fuzzing and stateful
# phases; the admin API twice: the simulator's own (its `tenants` routes included) and a
# tenant's, the same routes under its prefix `/t/{id}` behind its admin token. Any
# response that does not match the spec fails the script.
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
# LICENSING_BINARIES (a directory holding licensing-sim, as CI's test build leaves it):
# that simulator, not a second build of it with its own package's features.
if [ -n "${LICENSING_BINARIES:-}" ]; then
    sim_bin=$LICENSING_BINARIES/licensing-sim
    [ -x "$sim_bin" ] || fail "LICENSING_BINARIES=$LICENSING_BINARIES has no licensing-sim"
    echo "using $sim_bin (LICENSING_BINARIES)" >&2
else
    cargo build --quiet --locked -p licensing-sim --features bin --bin licensing-sim || fail "cannot build licensing-sim"
    # Wherever cargo puts its output (CARGO_TARGET_DIR included).
    target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    sim_bin=$target_dir/debug/licensing-sim
fi
mkdir -p "$WORK"
# One simulator per run, the four runs at once (Schemathesis is one Python process a
# run, mostly busy on its own side): no run sees state another made, and the admin API's
# run, which resets and replaces the state, disturbs no other.
sims=()
cleanup() {
    local pid
    for pid in "${sims[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts a simulator for SPEC; prints its URL.
start_sim() {
    local spec=$1 url=
    "$sim_bin" --addr 127.0.0.1:0 >"$WORK/sim-$spec.out" 2>"$WORK/sim-$spec.log" &
    sims+=($!)
    for _ in $(seq 1 100); do
        url=$(sed -n 's/^listening on //p' "$WORK/sim-$spec.out")
        [[ -n $url ]] && break
        if ! kill -0 "${sims[-1]}" 2>/dev/null; then
            cat "$WORK/sim-$spec.log" >&2
            fail "licensing-sim for $spec exited before listening"
        fi
        sleep 0.1
    done
    [[ -n $url ]] || fail "licensing-sim for $spec did not print 'listening on' within 10 s"
    echo "licensing-sim for $spec listening on $url" >&2
    urls[$spec]=$url
}
declare -A urls
for spec in order member sandbox tenant; do start_sim "$spec"; done
# A tenant of a simulator of its own (the sandbox run creates and deletes tenants): its
# base URL is where the admin spec's paths go, and its admin token is the one they need.
tenant_json=$(curl -sS -X POST "${urls[tenant]}/__sandbox/v1/tenants" -H 'Content-Type: application/json' \
    -d '{"name": "schemathesis"}') || fail "cannot create a tenant"
read -r tenant_url tenant_token < <(python3 -c 'import json,sys; t=json.load(sys.stdin); print(t["url"], t["tokens"]["admin"])' <<<"$tenant_json") ||
    fail "no tenant in the reply: $tenant_json"
urls[tenant]=$tenant_url

# --- Schemathesis against each spec -------------------------------------------------------
# Hypothesis keeps its caches here rather than in the work tree.
export HYPOTHESIS_STORAGE_DIRECTORY="$WORK/hypothesis"
run() {
    local spec=$1 file=$2
    shift 2
    "$VENV/bin/schemathesis" --config-file .ci/schemathesis.toml run "$file" \
        --url "${urls[$spec]}" \
        --phases examples,coverage,fuzzing,stateful \
        --checks all \
        --continue-on-failure \
        --suppress-health-check data_too_large \
        --max-examples "$MAX_EXAMPLES" \
        --seed "$SEED" \
        --workers 1 \
        --request-timeout 10 \
        --report junit --report-dir "$WORK/$spec" \
        "$@" >"$WORK/$spec.out" 2>&1
}

# The order document requires `Content-Type: application/json` on every request,
# bodiless ones included (the simulator answers 13004 without it).
run order spec/order.yaml \
    --header "Authorization: Bearer sim-app-token" \
    --header "Content-Type: application/json" &
order_job=$!
run member spec/member.yaml \
    --header "Authorization: Bearer sim-client-token" \
    --header "clientToken: sim-client-token" \
    --header "userToken: sim-user-token" &
member_job=$!
# The `recording` routes are the conformance proxy's, not the simulator's (licensing-proxy's
# proxy/tests/proxy covers them).
run sandbox sim/spec/sandbox.yaml --exclude-tag recording &
sandbox_job=$!
# A tenant's admin API has every route but the tenants' own.
run tenant sim/spec/sandbox.yaml --exclude-tag recording --exclude-tag tenants \
    --header "Authorization: Bearer $tenant_token" &
tenant_job=$!

status=0
for spec in order member sandbox tenant; do
    job=${spec}_job
    if wait "${!job}"; then result=passed; else result=FAILED; status=1; fi
    echo "== schemathesis: $spec: $result ==" >&2
    sed -e 's/^/  /' "$WORK/$spec.out" >&2
done

for pid in "${sims[@]}"; do
    kill -0 "$pid" 2>/dev/null || fail "a simulator died during the run (see $WORK/sim-*.log)"
done
[[ $status -eq 0 ]] || fail "Schemathesis reported failures (reports in $WORK/)"
echo "schemathesis.sh: all three specs passed, the admin spec under a tenant's prefix too" >&2
