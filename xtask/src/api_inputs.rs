//! `cargo xtask api-inputs`: a digest of everything the public API listings of
//! licensing-sdk and licensing-sim are made of, which `.ci/semver.sh` records beside them
//! and compares before it documents anything: while it matches, the listings, and so the
//! check's verdict, cannot differ, and the rustdoc JSON of the workspace is not built.
//!
//! What goes in: the toolchain (`rustc -vV`: rustdoc's JSON and the standard library's
//! types), `Cargo.lock` and every workspace member's manifest (the workspace's features
//! unify into both crates' dependencies, as `cargo doc --workspace --all-features`
//! documents them), `.ci/semver.sh` and this job's listing code (how they are made), and
//! every file `cargo package --list` ships of each workspace package the two crates build
//! on (their normal and build dependencies, the two included): a file a build script or a
//! module reads and the package does not ship would already fail the packages step.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The crates whose API `.ci/semver.sh` checks.
const CHECKED: [&str; 2] = ["licensing-sdk", "licensing-sim"];

/// Files of how the listings are made, relative to the workspace root.
const HOW: [&str; 3] = [
    ".ci/semver.sh",
    "xtask/src/api.rs",
    "xtask/src/api_inputs.rs",
];

/// What `cargo package --list` names that is not a file of the package on disk.
const GENERATED: [&str; 3] = [".cargo_vcs_info.json", "Cargo.toml.orig", "Cargo.lock"];

/// The digest, as hex, of the inputs of the workspace at `root`.
pub fn digest(root: &Path) -> Result<String> {
    let mut hash = Sha256::new();
    for (name, bytes) in inputs(root)? {
        hash.update((name.len() as u64).to_le_bytes());
        hash.update(name.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(format!("{:x}", hash.finalize()))
}

/// Every input by name: `toolchain`, or a path relative to `root`.
fn inputs(root: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut inputs = BTreeMap::new();
    inputs.insert("toolchain".to_string(), run(root, "rustc", &["-vV"])?);
    let meta: Value = serde_json::from_slice(&run(
        root,
        env!("CARGO"),
        &["metadata", "--format-version", "1", "--locked"],
    )?)?;
    let mut files: BTreeSet<PathBuf> = ["Cargo.lock"]
        .iter()
        .chain(&HOW)
        .map(PathBuf::from)
        .collect();
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .context("cargo metadata: workspace_members")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let packages: BTreeMap<&str, &Value> = meta["packages"]
        .as_array()
        .context("cargo metadata: packages")?
        .iter()
        .filter(|p| p["id"].as_str().is_some_and(|id| members.contains(id)))
        .map(|p| (p["id"].as_str().unwrap_or_default(), p))
        .collect();
    for package in packages.values() {
        files.insert(relative(root, manifest(package)?)?);
    }
    for id in closure(&meta, &packages)? {
        let package = packages[id];
        let name = package["name"]
            .as_str()
            .context("a package without a name")?;
        let dir = manifest(package)?.parent().context("a manifest's folder")?;
        let listed = run(
            root,
            env!("CARGO"),
            &["package", "--list", "--allow-dirty", "--locked", "-p", name],
        )?;
        for line in String::from_utf8(listed)?.lines() {
            if !GENERATED.contains(&line) {
                files.insert(relative(root, &dir.join(line))?);
            }
        }
    }
    for file in files {
        let bytes =
            fs::read(root.join(&file)).with_context(|| format!("reading {}", file.display()))?;
        inputs.insert(file.to_string_lossy().replace('\\', "/"), bytes);
    }
    Ok(inputs)
}

/// The workspace members [`CHECKED`] build on through normal and build dependencies,
/// themselves included.
fn closure<'m>(meta: &'m Value, packages: &BTreeMap<&'m str, &Value>) -> Result<BTreeSet<&'m str>> {
    let nodes: BTreeMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .context("cargo metadata: resolve")?
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let mut stack: Vec<&str> = packages
        .iter()
        .filter(|(_, p)| p["name"].as_str().is_some_and(|n| CHECKED.contains(&n)))
        .map(|(id, _)| *id)
        .collect();
    if stack.len() != CHECKED.len() {
        bail!("the workspace has not both of {CHECKED:?}");
    }
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if !packages.contains_key(id) || !seen.insert(id) {
            continue;
        }
        for dep in nodes
            .get(id)
            .and_then(|n| n["deps"].as_array())
            .into_iter()
            .flatten()
        {
            let kinds = dep["dep_kinds"].as_array().into_iter().flatten();
            if kinds
                .clone()
                .any(|k| k["kind"].is_null() || k["kind"] == "build")
            {
                stack.extend(dep["pkg"].as_str());
            }
        }
    }
    Ok(seen)
}

fn manifest(package: &Value) -> Result<&Path> {
    package["manifest_path"]
        .as_str()
        .map(Path::new)
        .context("cargo metadata: a package without manifest_path")
}

fn relative(root: &Path, path: &Path) -> Result<PathBuf> {
    let root = root.canonicalize()?;
    path.strip_prefix(&root)
        .map(Path::to_path_buf)
        .with_context(|| format!("{} is outside {}", path.display(), root.display()))
}

fn run(root: &Path, program: &str, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new(program)
        .args(args)
        .current_dir(root)
        .output()
        .with_context(|| format!("running {program}"))?;
    if !out.status.success() {
        bail!(
            "{program} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn package(name: &str, deps: &str) -> String {
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
             license = \"MIT\"\ndescription = \"d\"\ninclude = [\"/src/**/*.rs\"]\n\n\
             [dependencies]\n{deps}\n"
        )
    }

    /// A workspace of the two checked crates and one that builds on them, as the digest
    /// reads a real one.
    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"sdk\", \"sim\", \"cli\"]\nresolver = \"3\"\n",
        );
        write(root, "sdk/Cargo.toml", &package("licensing-sdk", ""));
        write(
            root,
            "sim/Cargo.toml",
            &package(
                "licensing-sim",
                "licensing-sdk = { path = \"../sdk\", version = \"0.1.0\" }",
            ),
        );
        write(
            root,
            "cli/Cargo.toml",
            &package(
                "licensing-cli",
                "licensing-sim = { path = \"../sim\", version = \"0.1.0\" }",
            ),
        );
        for file in ["sdk/src/lib.rs", "sim/src/lib.rs", "cli/src/lib.rs"] {
            write(root, file, "pub fn f() {}\n");
        }
        write(root, "sdk/notes.txt", "not shipped\n");
        for file in HOW {
            write(root, file, "how\n");
        }
        let status = Command::new(env!("CARGO"))
            .args(["generate-lockfile", "--offline"])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success());
        dir
    }

    /// Every kind of input moves the digest, and what the listings are not made of does not.
    #[test]
    fn each_input_moves_the_digest_and_nothing_else_does() {
        let dir = workspace();
        let root = dir.path();
        let mut last = digest(root).unwrap();
        // Another member's manifest: its features unify into the checked crates'.
        let cli = package(
            "licensing-cli",
            "licensing-sim = { path = \"../sim\", version = \"0.1.0\", default-features = false }",
        );
        let changes = [
            ("sdk/src/lib.rs", "pub fn g() {}\n", true),
            ("sim/src/lib.rs", "pub fn g() {}\n", true),
            ("sdk/src/new.rs", "pub fn h() {}\n", true),
            (".ci/semver.sh", "how, changed\n", true),
            ("cli/Cargo.toml", cli.as_str(), true),
            ("cli/src/lib.rs", "pub fn g() {}\n", false),
            ("sdk/notes.txt", "still not shipped\n", false),
            ("README.md", "a workspace\n", false),
        ];
        for (file, text, moves) in changes {
            write(root, file, text);
            let now = digest(root).unwrap();
            assert_eq!(
                now != last,
                moves,
                "{file}: moved {}, expected {moves}",
                now != last
            );
            last = now;
        }
    }

    /// The real workspace: both crates and what they build on, not the command line.
    #[test]
    fn the_closure_of_this_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let files = inputs(root).unwrap();
        for file in [
            "src/lib.rs",
            "build.rs",
            "spec/order.yaml",
            "sim/src/lib.rs",
            "codegen/src/lib.rs",
            "host/src/lib.rs",
            "cli/Cargo.toml",
            "Cargo.lock",
            "toolchain",
        ] {
            assert!(files.contains_key(file), "{file} is not an input");
        }
        assert!(!files.contains_key("cli/src/main.rs"));
        assert!(
            !files
                .keys()
                .any(|f| f.starts_with("docs/") && !f.ends_with(".md"))
        );
    }
}
