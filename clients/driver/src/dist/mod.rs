//! `cargo xtask dist [--check]`: the packages a partner installs without a Rust toolchain,
//! built into `<target>/dist/` from the release binaries (see `clients/sandbox/README.md`).
//!
//! * `licensing_sandbox-<version>-py3-none-manylinux_<glibc>_x86_64.whl`: the stripped
//!   `licensing-sim`, `licensing-proxy` and `licensing` on the venv's PATH, the module
//!   `licensing_sandbox` and its pytest plugin (`python.rs`);
//! * `licensing-sandbox-<version>.tgz` and `licensing-sandbox-linux-x64-<version>.tgz`: the
//!   npm package with `startSandbox` and the `npx` programs, and the platform package with
//!   the binaries, its optional dependency (`node.rs`);
//! * `licensing_client-<version>-py3-none-any.whl` and `.tar.gz`, with their dependencies in
//!   `wheelhouse/`, and `licensing-client-<version>.tgz`: the generated clients of the
//!   specs with their helpers, the specs and the JSON Schemas (`client.rs`).
//!
//! `--check` then installs each package in a fresh environment whose `PATH` holds no
//! `cargo` and no `rustc`, from `<target>/dist/` alone (the example suites' own test
//! runner from its registry, hash-pinned), and runs the example suite and the checks that
//! no simulator outlives a run, a failing test, Ctrl-C or a killed test runner; last, the
//! pip and npm commands of README.md and `docs/other-languages.md` as written
//! (`guides.rs`).

mod client;
mod guides;
mod node;
mod python;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::toolchain::{self, done, run, step};

/// What a run does besides building: the flags of `licensing-clients dist` and of
/// `cargo xtask dist`, which both take this.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Options {
    /// Also install each package in a fresh environment without a Rust toolchain on PATH
    /// and run its example suite and lifecycle checks.
    #[arg(long)]
    pub check: bool,
    /// Link the binaries with zig against glibc 2.17's symbols (a manylinux2014 wheel)
    /// instead of this machine's linker and glibc: a release build of its own, in
    /// `<target>/ZIG_TARGET`.
    #[arg(long)]
    pub zig: bool,
    /// Take licensing-sim, licensing-proxy and licensing from DIR, as another job built
    /// them (CI's test build, the benchmark's), instead of building them in release:
    /// packages to check or measure, not to publish.
    #[arg(long, value_name = "DIR", conflicts_with = "zig")]
    pub binaries: Option<PathBuf>,
}

/// The target `--zig` builds: this machine's, with the glibc version zig links against.
pub const ZIG_TARGET: &str = "x86_64-unknown-linux-gnu.2.17";

/// The three programs the packages carry: (package, features, binary).
const PROGRAMS: [(&str, &str, &str); 3] = [
    ("licensing-sim", "bin", "licensing-sim"),
    ("licensing-proxy", "", "licensing-proxy"),
    ("licensing-cli", "", "licensing"),
];

/// Where the packages are built from: the workspace's version and the stripped binaries.
pub(crate) struct Release {
    /// The SDK's version, which every package takes.
    pub version: String,
    /// `<target>/dist`, where the packages go.
    pub dist: PathBuf,
    /// The stripped binaries, by binary name.
    pub binaries: Vec<(String, PathBuf)>,
}

/// Builds every package (and checks them with `options.check`), printing each step.
pub fn run_all(root: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let (target, version) = metadata(root)?;
    let dist = target.join("dist");
    let binaries = match &options.binaries {
        Some(dir) => stripped_binaries(dir, &dist)?,
        None => release_binaries(root, &target, &dist, options.zig)?,
    };
    let release = Release {
        version,
        dist,
        binaries,
    };
    let wheel = python::wheel(root, &release)?;
    let tarballs = node::pack(root, &release)?;
    let clients = client::build(root, &release)?;
    let mut lines = vec![size_line(&wheel)?];
    for package in tarballs.iter().chain(&clients.python).chain([&clients.npm]) {
        lines.push(size_line(package)?);
    }
    if options.check {
        lines.extend(python::check(root, &release, &wheel, &clients)?);
        lines.extend(node::check(root, &release, &tarballs, &clients.npm)?);
        lines.extend(client::check(root, &release, &clients, &wheel, &tarballs)?);
        lines.extend(guides::check(root, &release, &target)?);
    }
    eprintln!("\ndist ({:.0} s):", started.elapsed().as_secs_f64());
    for line in lines {
        eprintln!("  {line}");
    }
    Ok(())
}

/// The target directory and the SDK's version, from `cargo metadata`.
fn metadata(root: &Path) -> Result<(PathBuf, String)> {
    let meta = toolchain::metadata(root)?;
    let target = meta["target_directory"]
        .as_str()
        .context("cargo metadata without target_directory")?;
    let version = meta["packages"]
        .as_array()
        .and_then(|packages| {
            packages
                .iter()
                .find(|p| p["name"] == "licensing-sdk")
                .and_then(|p| p["version"].as_str())
        })
        .context("cargo metadata without the licensing-sdk package")?;
    Ok((PathBuf::from(target), version.to_owned()))
}

/// Each program built in release (one `cargo build` each, as its own README builds it, so
/// that the features of one do not change the build of another and a build already there
/// is reused; with `zig`, `cargo zigbuild` for [`ZIG_TARGET`], its tools from
/// `zig-requirements.txt`), then copied stripped of its symbols into `dist/build/bin`.
fn release_binaries(
    root: &Path,
    target: &Path,
    dist: &Path,
    zig: bool,
) -> Result<Vec<(String, PathBuf)>> {
    let t = step("release binaries: licensing-sim, licensing-proxy, licensing");
    let zig_tools = if zig {
        let sources = root.join(python::SOURCES);
        Some(toolchain::venv(
            &sources.join("zig-requirements.txt"),
            &dist.join("build").join("zig-tools"),
        )?)
    } else {
        None
    };
    for (package, features, binary) in PROGRAMS {
        let mut command = match &zig_tools {
            // cargo-zigbuild finds zig as `python3 -m ziglang`, the venv's.
            Some(bin) => {
                let mut command = Command::new(bin.join("cargo-zigbuild"));
                command
                    .args(["zigbuild", "--target", ZIG_TARGET])
                    .env("PATH", toolchain::path_with(bin)?)
                    .env("CARGO", env!("CARGO"));
                command
            }
            None => {
                let mut command = Command::new(env!("CARGO"));
                command.arg("build");
                command
            }
        };
        command.args(["--release", "--locked", "-p", package]);
        if !features.is_empty() {
            command.args(["--features", features]);
        }
        run(command.args(["--bin", binary]).current_dir(root))?;
    }
    let built = match zig_tools {
        Some(_) => target.join("x86_64-unknown-linux-gnu"),
        None => target.to_path_buf(),
    }
    .join("release");
    done(t);
    stripped_binaries(&built, dist)
}

/// The three programs of `built`, copied stripped of their symbols into `dist/build/bin`.
fn stripped_binaries(built: &Path, dist: &Path) -> Result<Vec<(String, PathBuf)>> {
    let out = dist.join("build").join("bin");
    toolchain::remove(&out)?;
    fs::create_dir_all(&out)?;
    let mut binaries = Vec::new();
    for (_, _, binary) in PROGRAMS {
        let from = built.join(binary);
        if !from.is_file() {
            bail!("{} is missing: build it first", from.display());
        }
        let stripped = out.join(binary);
        run(Command::new("strip")
            .arg("--strip-all")
            .arg("-o")
            .arg(&stripped)
            .arg(&from))?;
        eprintln!(
            "{binary}: {} stripped ({} built, {})",
            mib(file_size(&stripped)?),
            mib(file_size(&from)?),
            from.display()
        );
        binaries.push((binary.to_owned(), stripped));
    }
    Ok(binaries)
}

/// Copies the directory `from` into `to` (made anew), leaving out Python's caches.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    toolchain::remove(to)?;
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "__pycache__" || name == ".pytest_cache" || name == "node_modules" {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if entry.file_type()?.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            fs::copy(&source, &target).with_context(|| {
                format!("cannot copy {} to {}", source.display(), target.display())
            })?;
        }
    }
    Ok(())
}

/// `npm pack` of the package staged in `staged` into `release.dist`, as
/// `{name}-{version}.tgz`; returns the tarball.
pub(crate) fn npm_pack(release: &Release, staged: &Path, name: &str) -> Result<PathBuf> {
    let tarball = release.dist.join(format!("{name}-{}.tgz", release.version));
    toolchain::remove(&tarball)?;
    run(Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(&release.dist)
        .current_dir(staged))?;
    if !tarball.exists() {
        bail!("npm pack wrote no {}", tarball.display());
    }
    Ok(tarball)
}

/// A fresh directory `release.dist/check/{name}` holding a venv (`venv/`): returns the
/// directory, the venv's `bin` and a `PATH` of it without a Rust toolchain
/// ([`path_without_rust`]).
pub(crate) fn fresh_venv(release: &Release, name: &str) -> Result<(PathBuf, PathBuf, OsString)> {
    let dir = release.dist.join("check").join(name);
    toolchain::remove(&dir)?;
    fs::create_dir_all(&dir)?;
    let venv = dir.join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    let bin = venv.join("bin");
    let path = path_without_rust(&bin)?;
    Ok((dir, bin, path))
}

/// A `PATH` of the system's own directories and `first`, checked to hold neither `cargo`
/// nor `rustc`: what a partner without a Rust toolchain has.
pub(crate) fn path_without_rust(first: &Path) -> Result<OsString> {
    let dirs = [first, Path::new("/usr/bin"), Path::new("/bin")];
    for dir in dirs {
        for tool in ["cargo", "rustc", "rustup"] {
            if dir.join(tool).exists() {
                bail!(
                    "{} is on the check's PATH ({}): the check needs a machine whose \
                     system directories hold no Rust toolchain",
                    tool,
                    dir.display()
                );
            }
        }
    }
    Ok(std::env::join_paths(dirs)?)
}

/// A command with a clean environment: `PATH` as given, `HOME` and the temporary
/// directory kept, nothing of cargo's, rustup's or the simulator's variables.
pub(crate) fn clean_command(program: impl AsRef<std::ffi::OsStr>, path: &OsString) -> Command {
    let mut command = Command::new(program);
    command.env_clear().env("PATH", path);
    for keep in ["HOME", "TMPDIR", "LANG", "TERM"] {
        if let Some(value) = std::env::var_os(keep) {
            command.env(keep, value);
        }
    }
    command
}

/// `python -m pip install --quiet` of the venv interpreter `python`, in a clean environment
/// on `path` ([`clean_command`]); the caller adds what to install.
pub(crate) fn pip_install(python: &Path, path: &OsString) -> Command {
    let mut command = clean_command(python, path);
    command.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    command
}

/// Runs a command and returns how long it took, failing as [`run`] does.
pub(crate) fn timed(command: &mut Command) -> Result<f64> {
    let started = Instant::now();
    run(command)?;
    Ok(started.elapsed().as_secs_f64())
}

pub(crate) fn file_size(path: &Path) -> Result<u64> {
    Ok(fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len())
}

/// A size in MiB, or in KiB below one MiB.
pub(crate) fn mib(bytes: u64) -> String {
    if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

fn size_line(package: &Path) -> Result<String> {
    Ok(format!(
        "{}: {}",
        package.file_name().unwrap_or_default().to_string_lossy(),
        mib(file_size(package)?)
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn the_check_path_refuses_a_directory_holding_cargo() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cargo"), "").unwrap();
        let error = super::path_without_rust(dir.path()).unwrap_err();
        assert!(
            error.to_string().contains("cargo is on the check's PATH"),
            "{error}"
        );
        let empty = tempfile::tempdir().unwrap();
        let path = super::path_without_rust(empty.path()).unwrap();
        let dirs: Vec<_> = std::env::split_paths(&path).collect();
        assert_eq!(
            dirs,
            [empty.path(), Path::new("/usr/bin"), Path::new("/bin")]
        );
    }

    #[test]
    fn copying_a_tree_leaves_python_caches_out() {
        let from = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(from.path().join("pkg/__pycache__")).unwrap();
        std::fs::write(from.path().join("pkg/mod.py"), "x = 1\n").unwrap();
        std::fs::write(from.path().join("pkg/__pycache__/mod.pyc"), "").unwrap();
        let to = tempfile::tempdir().unwrap();
        super::copy_tree(from.path(), &to.path().join("copy")).unwrap();
        assert!(to.path().join("copy/pkg/mod.py").exists());
        assert!(!to.path().join("copy/pkg/__pycache__").exists());
    }
}
