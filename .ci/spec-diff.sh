#!/usr/bin/env bash
# What the spec changes do to each consumer (the gate `licensing-spec-diff`, spec-diff/, run
# here as a partner would run it, plus `--workspace .` for the versions; `cargo xtask
# spec-diff` is the same; see docs/changing-the-spec.md): the head's spec/ against the
# base's, where the base is
#
#   * $SPEC_DIFF_BASE when set (a revision, or a directory holding order.yaml and
#     member.yaml);
#   * else the merge base with origin/main, when there is one and it is not HEAD itself;
#   * else the last release: the commit that last changed .ci/api-baseline (as
#     .ci/semver.sh finds it).
#
# A change that breaks any consumer (either direction of the wire included) fails the step
# unless
#
#   1. CHANGELOG.md's Unreleased section names it: its operation (`operationId`), or the
#      component schema it is in, or `x-error-codes` for the document's own list; and
#   2. each package spec-diff says must take a minor or major bump has it: its version at
#      HEAD is above the base's by that much. While .ci/api-baseline says `published = no`
#      nothing was released, so no version has to move yet.
#
# Then the proof of spec-diff's rules: `cargo test -p licensing-spec-diff` (the tests step)
# holds the rules to the compilers' verdicts recorded in spec-diff/corpus/proven.json for
# every mutation whose inputs (spec/, codegen/, the consumers, the pinned client
# generators, the mutation's edits) are unchanged since it was recorded; here the corpus
# (the package's `corpus` example, `cargo xtask spec-diff-corpus`) with `--stale` builds
# the consumers again for the mutations whose record is stale (about 60-90 s each with
# cargo-semver-checks' cross-check, so a change to the specs or the generator costs the
# whole corpus, 30-60 minutes on 2 cores; the Java and Go consumers, recorded apart on
# their own inputs, a few seconds a mutation). SPEC_DIFF_CORPUS=1 proves every mutation again,
# SPEC_DIFF_CORPUS=0 skips the step. A stale record proved here passes but is not written
# back: commit the proven.json that `cargo xtask spec-diff-corpus` writes.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

fail() {
  echo "spec-diff.sh: $*" >&2
  exit 1
}

if [[ -n ${SPEC_DIFF_BASE:-} ]]; then
  base=$SPEC_DIFF_BASE
elif git rev-parse -q --verify origin/main >/dev/null &&
  merge_base=$(git merge-base HEAD origin/main) &&
  [[ $merge_base != "$(git rev-parse HEAD)" ]]; then
  base=$merge_base
else
  base=$(git log -1 --format=%H -- .ci/api-baseline)
  [[ -n $base ]] || fail "no commit changed .ci/api-baseline: is this a shallow clone?"
fi
echo "== spec-diff against $base ==" >&2

out=${CARGO_TARGET_DIR:-target}/spec-diff
mkdir -p "$out"
set +e
spec_diff=(cargo run --quiet -p licensing-spec-diff -- --base "$base" --workspace .)
"${spec_diff[@]}" --format json >"$out/report.json"
status=$?
set -e
"${spec_diff[@]}" --format markdown >"$out/report.md" || true
sed -e 's/^/  /' "$out/report.md"
case $status in
0) echo "spec-diff.sh: no consumer breaks" >&2 ;;
1)
  published=$(sed -n 's/^published = //p' .ci/api-baseline)
  python3 - "$out/report.json" "$base" "$published" <<'PY' || fail "a breaking change is not recorded (above)"
import json, re, subprocess, sys

report = json.load(open(sys.argv[1]))
base, published = sys.argv[2], sys.argv[3]
text = open("CHANGELOG.md", encoding="utf-8").read()
m = re.search(r"^## \[Unreleased\]$(.*?)^## ", text, re.S | re.M)
unreleased = m.group(1) if m else ""
problems = []
# Both wire directions count: a change that breaks only new clients against the old
# deployment (an operation added) is named too, so that partners know to upgrade after it.
verdicts = ("wire_old_clients", "wire_new_clients", "rust", "typescript", "python", "schemas")
for c in report["changes"]:
    if "breaking" not in (c[v] for v in verdicts):
        continue
    schema = re.match(r"/components/schemas/([^/]+)", c["pointer"])
    names = [schema.group(1)] if schema else []
    # `operation` is null for a change that no operation uses.
    names += [o.strip() for o in (c["operation"] or "").split(",") if o.strip() not in ("*", "")]
    if c["operation"] == "*":
        names.append("x-error-codes")
    if not any(re.search(r"\b" + re.escape(n) + r"\b", unreleased) for n in names):
        problems.append(f"CHANGELOG.md Unreleased names none of {names}: {c['spec']}: {c['summary']}")

def version(text):
    m = re.search(r'^version = "([0-9]+)\.([0-9]+)\.([0-9]+)', text, re.M)
    return tuple(int(x) for x in m.groups()) if m else None

meta = json.loads(subprocess.check_output(
    ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"]))
root = meta["workspace_root"]
for p in meta["packages"]:
    bump = report["bump"].get(p["name"], "none")
    if bump not in ("minor", "major") or published == "no":
        continue
    manifest = p["manifest_path"][len(root) + 1:]
    try:
        old = version(subprocess.check_output(["git", "show", f"{base}:{manifest}"], text=True))
    except subprocess.CalledProcessError:
        continue  # a package the base did not have
    new = tuple(int(x) for x in p["version"].split("-")[0].split("."))
    # Below 1.0 the minor number is cargo's breaking position.
    at = 0 if (bump == "major" or new[0] >= 1) else 1
    if old is not None and new[: at + 1] <= old[: at + 1]:
        problems.append(f"{p['name']} needs a {bump} bump: {'.'.join(map(str, old))} -> {p['version']}")
for p in problems:
    print("  " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
  echo "spec-diff.sh: breaking changes, each recorded in CHANGELOG.md (and versioned once published)" >&2
  ;;
*) fail "spec-diff could not compare (exit $status, above)" ;;
esac

corpus=${SPEC_DIFF_CORPUS:-stale}
case $corpus in
0) echo "spec-diff.sh: the corpus's proof is skipped (SPEC_DIFF_CORPUS=0)" >&2 ;;
1 | stale)
  corpus_started=$SECONDS
  # The Java and Go consumers' tools, as .ci/clients.sh gets them: a JDK and Maven from
  # Debian when missing (Maven fetches openapi-generator's CLI and Jackson into its cache),
  # Go from PATH, their downloads under CI's cache.
  missing=()
  command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null || missing+=(maven)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing Debian's ${missing[*]}" >&2
    apt-get install -y -qq "${missing[@]}" >/dev/null || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
  fi
  command -v go >/dev/null || fail "go not found: the corpus's Go consumer needs Go 1.26 or later on PATH"
  ci_cache=${LICENSING_CI_CACHE:-$HOME/.cache/licensing-ci}
  export LICENSING_MAVEN_REPO=${LICENSING_MAVEN_REPO:-$ci_cache/maven}
  export GOMODCACHE=${GOMODCACHE:-$ci_cache/go/mod} GOCACHE=${GOCACHE:-$ci_cache/go/build}
  flags=()
  [[ $corpus == stale ]] && flags=(--stale)
  cp spec-diff/corpus/proven.json "$out/proven.committed.json"
  cargo run --quiet -p licensing-spec-diff --example corpus -- "${flags[@]}"
  if ! cmp -s spec-diff/corpus/proven.json "$out/proven.committed.json"; then
    echo "spec-diff.sh: spec-diff/corpus/proven.json was stale (proved again above, in $((SECONDS - corpus_started)) s): commit the new one" >&2
    cp "$out/proven.committed.json" spec-diff/corpus/proven.json
  fi
  ;;
*) fail "SPEC_DIFF_CORPUS is 0, 1 or stale, not '$corpus'" ;;
esac
echo "spec-diff.sh: done in $((SECONDS - started)) s" >&2
