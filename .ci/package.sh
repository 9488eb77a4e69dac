#!/usr/bin/env bash
# The crates as a registry would serve them:
#  1. `cargo package --workspace --no-verify` packs every publishable crate
#     (licensing-spec, licensing-codegen, licensing-sdk, licensing-sandbox-client,
#     licensing-host, licensing-sim, licensing-proxy, licensing-spec-diff, and the others
#     not marked `publish = false`);
#  2. a project outside the workspace holds the unpacked .crate files as its members and
#     depends on them only through [patch.crates-io], as if they were published: it builds
#     every one of them alone (libraries and binaries, all features), so a build script
#     that reads a file outside its package, or a file left out of `include`, fails here,
#     and it runs the quickstart against the simulator. This is what `cargo package`'s own
#     verification does, built once in one target directory instead of once per crate
#     and again for the quickstart.
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
roots = [p for p in meta["packages"] if p["name"] in ("licensing-sdk", "licensing-sim", "licensing-proxy")]
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
# The workspace's helpers (xtask, bench-load, licensing-cli, …) say `publish = false`: not
# packed. Every other package is.
read -r -a crates < <(cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
print(" ".join(p["name"] for p in json.load(sys.stdin)["packages"] if p["publish"] != []))
')
excluded=$(cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] == []:
        print("--exclude", p["name"])
')
echo "== cargo package --workspace $(echo $excluded) --no-verify: ${crates[*]} ==" >&2
# --allow-dirty: CI's own outputs (target/ is ignored, but a run may leave other files).
# shellcheck disable=SC2086 # one word per option and name
cargo package --workspace $excluded --locked --allow-dirty --no-verify
for crate in "${crates[@]}"; do
    [[ -f $target/package/$crate-$version.crate ]] || fail "no $crate-$version.crate"
done

echo "== a project of the packaged crates builds each alone and runs the quickstart ==" >&2
project=$target/packaged-quickstart
rm -rf "$project"
mkdir -p "$project/crates" "$project/src"
patches=
for crate in "${crates[@]}"; do
    tar -xzf "$target/package/$crate-$version.crate" -C "$project/crates"
    patches+="$crate = { path = \"crates/$crate-$version\" }"$'\n'
done
cat >"$project/Cargo.toml" <<MANIFEST
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
$patches
[workspace]
members = ["crates/*"]

# The workspace's dev profile (see its Cargo.toml), so that the dependencies built for the
# tests are reused here rather than built again with debug information.
[profile.dev.package."*"]
debug = false

[profile.dev.package.licensing-codegen]
debug = false

[profile.dev.package.licensing-spec]
debug = false
MANIFEST
cp quickstart/src/main.rs "$project/src/main.rs"
cp Cargo.lock "$project/Cargo.lock"
(
    cd "$project"
    # Every packaged crate's libraries and binaries (the simulator's needs its `bin`
    # feature), as `cargo package` would verify them, in one build; then the quickstart.
    packages=()
    for crate in "${crates[@]}"; do packages+=(-p "$crate"); done
    CARGO_TARGET_DIR=$target cargo build --quiet "${packages[@]}" --all-features
    CARGO_TARGET_DIR=$target cargo run --quiet -p packaged-quickstart >"$project/quickstart.out" 2>&1
) || {
    cat "$project/quickstart.out" >&2 2>/dev/null || true
    fail "a packaged crate failed to build alone, or the quickstart on them failed (output above)"
}
tail -n 3 "$project/quickstart.out"
# The project built the unpacked crates, not the workspace's.
for crate in "${crates[@]}"; do
    id=$(cd "$project" && cargo pkgid --quiet "$crate")
    [[ $id == *"/packaged-quickstart/crates/$crate-$version#"* ]] ||
        fail "$crate came from $id, not from its .crate"
done
echo "package.sh: packaged, built each alone and ran the quickstart in $((SECONDS - started)) s" >&2
