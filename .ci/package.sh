#!/usr/bin/env bash
# The crates as a registry would serve them:
#  1. `cargo package --workspace` packs licensing-codegen, licensing-sdk and licensing-sim
#     and verifies each: it unpacks the .crate and builds it alone, with the others served
#     from a local registry overlay (cargo 1.90 or later), so a build script that reads a
#     file outside its package, or a file left out of `include`, fails here;
#  2. a project outside the workspace, depending on the three unpacked .crate files only
#     (through [patch.crates-io], as if they were published), runs the quickstart against
#     the simulator.
# The project reuses the workspace's Cargo.lock, so it builds the same dependency versions
# (and from the same build cache) as the rest of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

fail() {
    echo "package.sh: $*" >&2
    exit 1
}

# Packaging unpublished crates that depend on each other needs cargo's local registry
# overlay (`cargo package --workspace`, stable since 1.90).
cargo_minor=$(cargo --version | sed -E 's/^cargo 1\.([0-9]+).*/\1/')
[[ $cargo_minor =~ ^[0-9]+$ ]] || fail "cannot read the version of '$(cargo --version)'"
((cargo_minor >= 90)) || fail "cargo 1.90 or later is needed, found $(cargo --version)"

# The minimum Rust version the packages state (1.88) is checked in three ways, as only
# one toolchain is installed: clippy's `incompatible_msrv` lint (an error under CI's
# `-D warnings`) refuses standard-library items newer than it; cargo's resolver locks
# dependencies compatible with it; and here, no crate the published packages build
# (normal and build dependencies, on Linux) declares a newer one.
cargo metadata --format-version 1 --locked --filter-platform x86_64-unknown-linux-gnu |
    python3 -c '
import json, sys
meta = json.load(sys.stdin)
packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
def version(text):
    parts = [int(x) for x in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))
roots = [p for p in meta["packages"] if p["name"] in ("licensing-sdk", "licensing-sim")]
msrv = version(roots[0]["rust_version"])
seen, stack = set(), [p["id"] for p in roots]
while stack:
    node = stack.pop()
    if node in seen:
        continue
    seen.add(node)
    for dep in nodes[node]["deps"]:
        if any(k["kind"] in (None, "build") for k in dep["dep_kinds"]):
            stack.append(dep["pkg"])
def name(i):
    p = packages[i]
    return "%s %s needs %s" % (p["name"], p["version"], p["rust_version"])
newer = sorted(name(i) for i in seen
               if packages[i].get("rust_version") and version(packages[i]["rust_version"]) > msrv)
stated = roots[0]["rust_version"]
if newer:
    sys.exit("dependencies newer than rust-version %s: %s" % (stated, "; ".join(newer)))
print("rust-version %s: none of the %d crates built declares a newer one" % (stated, len(seen)),
      file=sys.stderr)
'

target=${CARGO_TARGET_DIR:-$PWD/target}
version=$(sed -nE 's/^version = "([^"]+)"/\1/p' Cargo.toml | head -n 1)
crates=(licensing-codegen licensing-sdk licensing-sim)

# The workspace's helpers (xtask, bench-load, …) say `publish = false`: not packed.
unpublished=$(cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] == []:
        print("--exclude", p["name"])
')
echo "== cargo package --workspace $(echo $unpublished) (verifying) ==" >&2
# --allow-dirty: CI's own outputs (target/ is ignored, but a run may leave other files).
# shellcheck disable=SC2086 # one word per option and name
cargo package --workspace $unpublished --locked --allow-dirty
for crate in "${crates[@]}"; do
    [[ -f $target/package/$crate-$version.crate ]] || fail "no $crate-$version.crate"
done

echo "== a project on the packaged crates runs the quickstart ==" >&2
project=$target/packaged-quickstart
rm -rf "$project"
mkdir -p "$project/crates" "$project/src"
for crate in "${crates[@]}"; do
    tar -xzf "$target/package/$crate-$version.crate" -C "$project/crates"
done
cat >"$project/Cargo.toml" <<EOF
[package]
name = "packaged-quickstart"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
licensing-sdk = "=$version"
licensing-sim = "=$version"
futures-util = "0.3"
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

[patch.crates-io]
licensing-codegen = { path = "crates/licensing-codegen-$version" }
licensing-sdk = { path = "crates/licensing-sdk-$version" }
licensing-sim = { path = "crates/licensing-sim-$version" }

[workspace]
EOF
cp examples/quickstart.rs "$project/src/main.rs"
cp Cargo.lock "$project/Cargo.lock"
(
    cd "$project"
    CARGO_TARGET_DIR=$target cargo run --quiet >"$project/quickstart.out" 2>&1
) || {
    cat "$project/quickstart.out" >&2
    fail "the quickstart on the packaged crates failed (output above)"
}
tail -n 3 "$project/quickstart.out"
# The project built the unpacked crates, not the workspace's.
for crate in "${crates[@]}"; do
    id=$(cd "$project" && cargo pkgid --quiet "$crate")
    [[ $id == *"/packaged-quickstart/crates/$crate-$version#"* ]] ||
        fail "$crate came from $id, not from its .crate"
done
echo "package.sh: packaged, verified and ran the quickstart in $((SECONDS - started)) s" >&2
