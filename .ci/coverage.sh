#!/usr/bin/env bash
# What the project's own test suite exercised against the documents: every simulator the
# tests started wrote its journal into $LICENSING_SIM_JOURNAL_DIR when it stopped (.ci/run
# sets it for README command 2), and `licensing-proxy coverage` reads them all. The
# totals go to the CI log as a figure, not a gate; the markdown, JSON and JUnit reports
# are kept beside the CI logs. The JUnit report is validated against the JUnit schema
# Jenkins and most CI dashboards read (junit-10.xsd, taken from pytest's source
# distribution, pinned by hash) with xmlschema.
#
# `--install-only` installs the validator and the schema and stops (CI's background
# installs). Needs python3 with venv, and the registries.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly XMLSCHEMA_VERSION=4.3.2
readonly PYTEST_SDIST_VERSION=8.4.2
readonly PYTEST_SDIST_SHA256=86c0d0b93306b961d58d62a4db4879f27fe25513d4b969df351abdddb3c30e01
tools=target/ci-coverage
xsd=$tools/junit-10.xsd

install() {
  if [ ! -x "$tools/venv/bin/python" ] ||
    ! "$tools/venv/bin/python" -c "import xmlschema, sys; sys.exit(xmlschema.__version__ != '$XMLSCHEMA_VERSION')" 2>/dev/null; then
    python3 -m venv --clear "$tools/venv"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "xmlschema==$XMLSCHEMA_VERSION"
  fi
  if [ ! -s "$xsd" ]; then
    local sdist=$tools/sdist
    rm -rf "$sdist"
    mkdir -p "$sdist"
    printf 'pytest==%s --hash=sha256:%s\n' "$PYTEST_SDIST_VERSION" "$PYTEST_SDIST_SHA256" >"$sdist/requirements.txt"
    "$tools/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
      --no-binary :all: --require-hashes -r "$sdist/requirements.txt" -d "$sdist"
    tar -xzf "$sdist/pytest-$PYTEST_SDIST_VERSION.tar.gz" -C "$sdist" \
      "pytest-$PYTEST_SDIST_VERSION/testing/example_scripts/junit-10.xsd"
    mv "$sdist/pytest-$PYTEST_SDIST_VERSION/testing/example_scripts/junit-10.xsd" "$xsd"
    rm -rf "$sdist"
  fi
}

mkdir -p "$tools"
install
[ "${1:-}" = "--install-only" ] && exit 0

journals=${LICENSING_SIM_JOURNAL_DIR:?set by .ci/run for the test run}
target=${CARGO_TARGET_DIR:-$PWD/target}
proxy=$target/debug/licensing-proxy
[ -x "$proxy" ] || { echo "coverage.sh: $proxy not built (the tests build it)" >&2; exit 1; }
shopt -s nullglob
files=("$journals"/*.json)
((${#files[@]} > 0)) || { echo "coverage.sh: no journal in $journals" >&2; exit 1; }
out=$target/ci-logs/coverage
mkdir -p "$out"
"$proxy" coverage "${files[@]}" --format markdown >"$out/coverage.md"
"$proxy" coverage "${files[@]}" --format json >"$out/coverage.json"
"$proxy" coverage "${files[@]}" --format junit >"$out/coverage.xml"
"$tools/venv/bin/python" - "$xsd" "$out/coverage.xml" <<'PYEOF'
import sys, xmlschema
xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])
print(f"coverage.xml: valid against junit-10.xsd")
PYEOF
python3 - "$out/coverage.json" "${#files[@]}" <<'PYEOF'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
def r(k):
    x = t[k]
    pct = 100.0 * x["seen"] / x["of"] if x["of"] else 100.0
    return f'{x["seen"]}/{x["of"]} ({pct:.0f}%)'
print(f'the test suite\'s coverage ({sys.argv[2]} simulator journals, {t["exchanges"]} exchanges): '
      f'operations {r("operations")}, codes {r("codes")}, enum values {r("enums")}, '
      f'optional fields {r("optional")}, paging {r("paging")}, retries observed {t["retries"]}')
PYEOF
# The first suspected double submissions (awk stops printing rather than closing a pipe
# early, which pipefail would count as a failure).
awk '/^## Suspected double submissions/ { on = 1 } on && shown++ < 12' "$out/coverage.md"
