//! The digest of what a check is made of, so that CI runs it only when that changed
//! (`cargo xtask api-inputs` for the API listings, `cargo xtask ci-step` for the keyed
//! steps of `.ci/run`). While the digest matches the one a passing run recorded, the
//! check's verdict cannot differ.
//!
//! What goes in, by kind:
//! * workspace packages ([`Roots`]): every file `cargo package --list` ships of each
//!   package the roots build on (normal and build dependencies, the roots included, and
//!   with [`Inputs::dev`] the roots' dev-dependencies and what those build on), plus
//!   every member's manifest and `Cargo.lock` (the workspace's features unify into every
//!   package's dependencies). A file a build script or a module reads and the package does
//!   not ship would already fail the packages step;
//! * paths ([`Inputs::paths`]): every file git knows under each (tracked, or untracked and
//!   not ignored), whether a package ships it or not; never `.ci/checked/`, where the
//!   digests themselves are recorded;
//! * commands ([`Inputs::commands`]): what each prints and how it exits, for the tools a
//!   check runs (`rustc -vV`, `go version`); a command that is not installed is an input
//!   too ("not found"), so that installing it moves the digest;
//! * environment variables ([`Inputs::env`]) that change what a check does.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The workspace packages whose closure is an input.
#[derive(Debug, Clone, Copy)]
pub enum Roots {
    /// These packages, by name.
    Named(&'static [&'static str]),
    /// Every member that may be published (`publish` not set to false).
    Published,
    /// Every member.
    All,
}

/// What a check is made of.
#[derive(Debug, Clone, Copy)]
pub struct Inputs {
    pub roots: Roots,
    /// The roots' dev-dependencies too (for checks that build tests or examples).
    pub dev: bool,
    /// Files and folders relative to the workspace root.
    pub paths: &'static [&'static str],
    /// Programs with their arguments, run in the workspace root.
    pub commands: &'static [&'static [&'static str]],
    /// Environment variables the check reads (their values, or that they are unset).
    pub env: &'static [&'static str],
}

/// Where the digests of `cargo xtask ci-step` are recorded: never an input itself.
pub const RECORDS: &str = ".ci/checked";

/// What `cargo package --list` names that is not a file of the package on disk.
const GENERATED: [&str; 3] = [".cargo_vcs_info.json", "Cargo.toml.orig", "Cargo.lock"];

impl Inputs {
    /// The digest, as hex, of the inputs of the workspace at `root`.
    pub fn digest(&self, root: &Path) -> Result<String> {
        Ok(hash(&self.collect(root)?))
    }

    /// Every input by name: `$ program args` for a command, else a path relative to `root`.
    pub fn collect(&self, root: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
        let mut inputs = BTreeMap::new();
        for command in self.commands {
            let (program, args) = command.split_first().context("an empty command")?;
            inputs.insert(
                format!("$ {}", command.join(" ")),
                output(root, program, args),
            );
        }
        for name in self.env {
            let value = std::env::var_os(name).map_or_else(
                || b"unset".to_vec(),
                |v| format!("set: {}", v.to_string_lossy()).into_bytes(),
            );
            inputs.insert(format!("env {name}"), value);
        }
        let mut files = self.package_files(root)?;
        for path in self.paths {
            let listed = git_files(root, path)?;
            if listed.is_empty() {
                bail!("{path}: no file git knows of there (an input of this check)");
            }
            files.extend(listed);
        }
        for file in files {
            let path = root.join(&file);
            // Listed by git but deleted in the working tree: its absence is the input.
            if !path.exists() {
                continue;
            }
            let bytes = fs::read(&path).with_context(|| format!("reading {}", file.display()))?;
            inputs.insert(file.to_string_lossy().replace('\\', "/"), bytes);
        }
        Ok(inputs)
    }

    /// That every path has files and every named root is a member, without reading them.
    #[cfg(test)]
    pub fn check(&self, root: &Path) -> Result<()> {
        for path in self.paths {
            if git_files(root, path)?.is_empty() {
                bail!("{path}: no file git knows of there (an input of this check)");
            }
        }
        let meta = metadata(root)?;
        self.root_ids(&members(&meta)?).map(drop)
    }

    fn package_files(&self, root: &Path) -> Result<BTreeSet<PathBuf>> {
        let meta = metadata(root)?;
        let mut files = BTreeSet::from([PathBuf::from("Cargo.lock")]);
        let packages = members(&meta)?;
        for package in packages.values() {
            files.insert(relative(root, manifest(package)?)?);
        }
        let roots = self.root_ids(&packages)?;
        let closure = closure(&meta, &packages, roots, self.dev)?;
        // One `cargo package --list` a package, a few tenths of a second each: side by side.
        let listings = std::thread::scope(|scope| {
            let handles: Vec<_> = closure
                .iter()
                .map(|id| {
                    let package = packages[id];
                    scope.spawn(move || listing(root, package))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a listing thread panicked"))
                .collect::<Result<Vec<_>>>()
        })?;
        for listed in listings {
            files.extend(listed);
        }
        Ok(files)
    }

    fn root_ids<'m>(&self, packages: &BTreeMap<&'m str, &Value>) -> Result<Vec<&'m str>> {
        let ids: Vec<&str> = packages
            .iter()
            .filter(|(_, p)| match self.roots {
                Roots::Named(names) => p["name"].as_str().is_some_and(|n| names.contains(&n)),
                // `publish = false` is an empty list of registries in cargo metadata.
                Roots::Published => !p["publish"].as_array().is_some_and(Vec::is_empty),
                Roots::All => true,
            })
            .map(|(id, _)| *id)
            .collect();
        if let Roots::Named(names) = self.roots
            && ids.len() != names.len()
        {
            bail!("the workspace has not all of {names:?}");
        }
        Ok(ids)
    }
}

fn metadata(root: &Path) -> Result<Value> {
    Ok(serde_json::from_slice(&run(
        root,
        env!("CARGO"),
        &["metadata", "--format-version", "1", "--locked"],
    )?)?)
}

/// The workspace's members by package id.
fn members(meta: &Value) -> Result<BTreeMap<&str, &Value>> {
    let ids: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .context("cargo metadata: workspace_members")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    Ok(meta["packages"]
        .as_array()
        .context("cargo metadata: packages")?
        .iter()
        .filter(|p| p["id"].as_str().is_some_and(|id| ids.contains(id)))
        .map(|p| (p["id"].as_str().unwrap_or_default(), p))
        .collect())
}

/// The files `cargo package --list` ships of a package, relative to the workspace root.
fn listing(root: &Path, package: &Value) -> Result<Vec<PathBuf>> {
    let name = package["name"]
        .as_str()
        .context("a package without a name")?;
    let dir = manifest(package)?.parent().context("a manifest's folder")?;
    let listed = run(
        root,
        env!("CARGO"),
        &["package", "--list", "--allow-dirty", "--locked", "-p", name],
    )?;
    String::from_utf8(listed)?
        .lines()
        .filter(|line| !GENERATED.contains(line))
        .map(|line| relative(root, &dir.join(line)))
        .collect()
}

fn hash(inputs: &BTreeMap<String, Vec<u8>>) -> String {
    let mut hash = Sha256::new();
    for (name, bytes) in inputs {
        hash.update((name.len() as u64).to_le_bytes());
        hash.update(name.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    }
    format!("{:x}", hash.finalize())
}

/// What git knows under `path`: tracked files, and untracked ones that are not ignored.
fn git_files(root: &Path, path: &str) -> Result<BTreeSet<PathBuf>> {
    let listed = run(
        root,
        "git",
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            path,
        ],
    )?;
    Ok(listed
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| PathBuf::from(String::from_utf8_lossy(f).into_owned()))
        .filter(|f| !f.starts_with(RECORDS))
        .collect())
}

/// A command's exit status, stdout and stderr, or that it could not be started.
fn output(root: &Path, program: &str, args: &[&str]) -> Vec<u8> {
    match Command::new(program).args(args).current_dir(root).output() {
        Ok(out) => {
            let mut bytes = format!("{}\n", out.status).into_bytes();
            bytes.extend(out.stdout);
            bytes.extend(b"\n--- stderr\n");
            bytes.extend(out.stderr);
            bytes
        }
        Err(error) => format!("not found: {}", error.kind()).into_bytes(),
    }
}

/// The workspace members `roots` build on through normal and build dependencies (and,
/// with `dev`, the roots' dev-dependencies), the roots included.
fn closure<'m>(
    meta: &'m Value,
    packages: &BTreeMap<&'m str, &Value>,
    roots: Vec<&'m str>,
    dev: bool,
) -> Result<BTreeSet<&'m str>> {
    let nodes: BTreeMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .context("cargo metadata: resolve")?
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let root_set: BTreeSet<&str> = roots.iter().copied().collect();
    let mut stack = roots;
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
            if kinds.clone().any(|k| {
                k["kind"].is_null()
                    || k["kind"] == "build"
                    || (dev && k["kind"] == "dev" && root_set.contains(id))
            }) {
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
#[path = "inputs_tests.rs"]
pub(crate) mod tests;
