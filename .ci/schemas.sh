#!/usr/bin/env bash
# Proves the exported JSON Schemas (schemas/) with other languages' tools:
#
#   1. `cargo xtask export-schemas --check`: schemas/ is what spec/*.yaml gives (the
#      translation is licensing-json-schema, whose unit tests run with the workspace's,
#      README command 2);
#   2. every example of both specs (`cargo xtask export-samples`) is accepted, and every
#      committed invalid payload (tests/schema-samples/invalid/) is rejected, by
#      check-jsonschema (Python) and ajv-cli (Node, draft 2020-12 with ajv-formats);
#   3. with the Ajv library: every schema compiles in strict mode, each invalid payload is
#      rejected for the reason its name gives, and every constraint of every schema is
#      such a reason at least once;
#   4. TypeScript types from json-schema-to-typescript compile with `tsc --noEmit --strict`,
#      type every example, and reject the invalid payloads that TypeScript can express;
#   5. pydantic v2 models from datamodel-code-generator import, round-trip every example
#      and reject the invalid payloads (.ci/schema_roundtrip.py).
#
# Installs its tools (pinned below) into target/ci-schemas/{venv,node} (apart from the
# tools of .ci/run), works in target/ci-schemas/work, and ends with `N passed, M failed`
# (exit 1 when M > 0).
# Needs: cargo, python3 (>= 3.10, with venv), node (>= 18) and npm, and the registries.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PY_PACKAGES=(check-jsonschema==0.39.0 datamodel-code-generator==0.89.0)
NPM_PACKAGES=(ajv@8.20.0 ajv-cli@5.0.0 ajv-formats@3.0.1 json-schema-to-typescript@16.0.0 typescript@7.0.2)
VENV=target/ci-schemas/venv
NODE_DIR=target/ci-schemas/node
WORK=target/ci-schemas/work
INVALID=tests/schema-samples/invalid

passed=0
failed=0
step() { printf '\n== %s\n' "$*"; }
tally() { passed=$((passed + $1)); failed=$((failed + $2)); }
finish() {
  printf '\n%s passed, %s failed\n' "$passed" "$failed"
  if [ "$failed" -eq 0 ]; then exit 0; else exit 1; fi
}
# Runs a checker that ends with `RESULT <passed> <failed>`; adds its counts.
run_checker() {
  local log="$WORK/$1.log"
  shift
  "$@" | tee "$log" | grep -v '^RESULT ' || true
  local result
  result=$(grep '^RESULT ' "$log" | tail -n 1) || true
  if [ -z "$result" ]; then
    echo "FAIL $* ended without a RESULT line"
    tally 0 1
    return
  fi
  read -r _ p f <<<"$result"
  tally "$p" "$f"
}

step "tools"
stamp="${PY_PACKAGES[*]}"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.packages" 2>/dev/null)" != "$stamp" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "${PY_PACKAGES[@]}"
  echo "$stamp" >"$VENV/.packages"
fi
stamp="${NPM_PACKAGES[*]}"
if [ "$(cat "$NODE_DIR/.packages" 2>/dev/null)" != "$stamp" ]; then
  mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent "${NPM_PACKAGES[@]}"
  echo "$stamp" >"$NODE_DIR/.packages"
fi
# `.ci/run` installs the tools in the background while the tests build: only that.
if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi
BIN="$NODE_DIR/node_modules/.bin"
export NODE_PATH="$PWD/$NODE_DIR/node_modules"
echo "python: $("$VENV/bin/check-jsonschema" --version), $("$VENV/bin/datamodel-codegen" --version | head -n 1)"
echo "node: ${NPM_PACKAGES[*]}"
rm -rf "$WORK"
mkdir -p "$WORK"

step "cargo xtask export-schemas --check"
if cargo xtask export-schemas --check; then
  tally 1 0
else
  tally 0 1
  echo "FAIL schemas/ is stale; the checks below would test the wrong files"
  finish
fi
for service in order member; do
  echo "$service: $(find "schemas/$service" -name '*.json' | wc -l) schemas"
done

step "cargo xtask export-samples"
cargo xtask export-samples "$WORK/samples"
echo "invalid samples: $(find "$INVALID" -name '*.json' | wc -l) in $INVALID"

step "check-jsonschema and ajv-cli: valid samples accepted, invalid samples rejected"
run_checker validate "$VENV/bin/python" .ci/schema_validate.py \
  schemas "$WORK/samples" "$INVALID" "$VENV/bin/check-jsonschema" "$BIN/ajv"

step "ajv (library): strict compile, rejection reasons, constraint coverage"
run_checker ajv node .ci/schema_check.cjs ajv schemas "$WORK/samples" "$INVALID"

step "TypeScript: json-schema-to-typescript, tsc --noEmit --strict"
ts="$WORK/ts"
for service in order member; do
  if ! "$BIN/json2ts" --input "schemas/$service/*.json" --output "$ts/$service/"; then
    echo "FAIL json2ts schemas/$service"
    tally 0 1
  fi
done
node .ci/schema_check.cjs ts-samples "$WORK/samples" "$INVALID" "$ts/samples"
mapfile -t ts_files < <(find "$ts" -name '*.ts' | sort)
tsc_status=0
"$BIN/tsc" --noEmit --strict "${ts_files[@]}" >"$WORK/tsc.log" 2>&1 || tsc_status=$?
# tsc reports `path(line,col): error ...`: one failed check per file with errors.
mapfile -t ts_failed < <(sed -n 's/^\([^(]*\.ts\)(.*/\1/p' "$WORK/tsc.log" | sort -u)
if [ "$tsc_status" -ne 0 ]; then
  sed 's/^/  /' "$WORK/tsc.log"
  for file in "${ts_failed[@]}"; do echo "FAIL tsc $file"; done
  if [ "${#ts_failed[@]}" -eq 0 ]; then
    echo "FAIL tsc exited with $tsc_status"
    tally 0 1
  fi
fi
echo "tsc: ${#ts_files[@]} files ($(find "$ts" -name '*.d.ts' | wc -l) generated declarations), ${#ts_failed[@]} with errors"
tally $((${#ts_files[@]} - ${#ts_failed[@]})) "${#ts_failed[@]}"

step "Python: datamodel-code-generator (pydantic v2), import, round trip, rejection"
py="$WORK/py/licensing_schemas"
for service in order member; do
  if ! "$VENV/bin/datamodel-codegen" --input "schemas/$service" --input-file-type jsonschema \
    --output-model-type pydantic_v2.BaseModel --output "$py/$service" \
    --target-python-version 3.11 --snake-case-field --use-schema-description \
    --use-field-description --type-mappings string+password=string \
    --disable-timestamp --formatters builtin; then
    echo "FAIL datamodel-codegen schemas/$service"
    tally 0 1
  fi
done
touch "$py/__init__.py"
run_checker python "$VENV/bin/python" .ci/schema_roundtrip.py schemas "$WORK/py" "$WORK/samples" "$INVALID"

finish
