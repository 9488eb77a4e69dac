//! The `licensing-sandbox` wheel (`clients/sandbox/python/`): staged with the stripped
//! binaries and the version, built by hatchling, tagged by auditwheel; and its check in a
//! fresh venv without a Rust toolchain.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{Release, clean_command, copy_tree, file_size, mib, pip_install, timed};
use crate::toolchain::{self, done, run, step};

/// The wheel's sources, relative to the repository root.
pub const SOURCES: &str = "clients/sandbox/python";
/// The distribution's name as wheel file names spell it.
const WHEEL_NAME: &str = "licensing_sandbox";
/// The most an install from local files may take (the issue's bound), in seconds.
const INSTALL_LIMIT_SECS: f64 = 30.0;

/// Builds the wheel into `<target>/dist/` and returns its path.
pub fn wheel(root: &Path, release: &Release) -> Result<PathBuf> {
    let t = step("Python: the licensing-sandbox wheel (hatchling, auditwheel)");
    let sources = root.join(SOURCES);
    let build = release.dist.join("build");
    let tools = toolchain::venv(
        &sources.join("requirements.txt"),
        &build.join("python-tools"),
    )?;
    let staged = build.join("python");
    for part in ["src", "example"] {
        copy_tree(&sources.join(part), &staged.join(part))?;
    }
    toolchain::copy(
        &sources,
        &staged,
        &["pyproject.toml", "hatch_build.py", "README.md"],
    )?;
    toolchain::copy(root, &staged, &["LICENSE-MIT", "LICENSE-APACHE"])?;
    fs::write(
        staged.join("src").join(WHEEL_NAME).join("_version.py"),
        format!(
            "# Written by `cargo xtask dist`: the SDK's version.\n__version__ = \"{}\"\n",
            release.version
        ),
    )?;
    let bin = staged.join("bin");
    fs::create_dir_all(&bin)?;
    for (name, path) in &release.binaries {
        fs::copy(path, bin.join(name))?;
    }

    // hatchling writes a `linux_x86_64` wheel; auditwheel reads the binaries' symbol
    // versions and gives it the oldest manylinux tag they allow.
    let unrepaired = build.join("wheel");
    toolchain::remove(&unrepaired)?;
    run(Command::new(tools.join("python"))
        .args([
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--no-build-isolation", "--no-deps", "--no-index", "-w"])
        .arg(&unrepaired)
        .arg(&staged))?;
    let built = only_wheel(&unrepaired)?;
    for old in wheels(&release.dist)? {
        fs::remove_file(old)?;
    }
    run(Command::new(tools.join("auditwheel"))
        .args(["repair", "--plat", "auto", "-w"])
        .arg(&release.dist)
        .arg(&built)
        .env("PATH", toolchain::path_with(&tools)?))?;
    let wheel = only_wheel(&release.dist)?;
    run(Command::new(tools.join("auditwheel"))
        .arg("show")
        .arg(&wheel))?;
    eprintln!("{}: {}", wheel.display(), mib(file_size(&wheel)?));
    done(t);
    Ok(wheel)
}

/// A fresh venv with nothing but pytest and pytest-xdist (hash-pinned, from their
/// registry; the tenant suite runs in four workers against one shared simulator), the wheel and
/// licensing-client, whose generated client the example suite calls the services with,
/// and that one's dependencies (from the local files, `--no-index`), a `PATH` without
/// cargo or rustc, and the example suite with its lifecycle checks. Returns the lines of
/// the summary.
pub fn check(
    root: &Path,
    release: &Release,
    wheel: &Path,
    clients: &super::client::Clients,
) -> Result<Vec<String>> {
    let t = step("Python: the wheel in a fresh venv, no Rust toolchain on PATH");
    let (dir, bin, path) = super::fresh_venv(release, "python")?;
    let python = bin.join("python");
    let pip = |args: &[&str]| {
        let mut command = pip_install(&python, &path);
        command.args(args);
        command
    };
    let example = dir.join("example");
    copy_tree(&root.join(SOURCES).join("example"), &example)?;
    run(pip(&["--require-hashes", "--no-deps", "-r"]).arg(example.join("requirements.txt")))?;
    // licensing-client named as well, not left to the wheel's dependency: the example
    // suite imports its generated packages itself.
    let install = timed(
        pip(&["--no-index", "--find-links"])
            .arg(&release.dist)
            .arg("--find-links")
            .arg(&clients.wheelhouse)
            .arg(wheel)
            .arg(&clients.python[0]),
    )?;
    if install > INSTALL_LIMIT_SECS {
        bail!("installing the wheel took {install:.1} s, more than {INSTALL_LIMIT_SECS} s");
    }
    // Each program found on the venv's PATH, not by its path.
    for program in ["licensing-sim", "licensing-proxy", "licensing"] {
        run(clean_command(program, &path).arg("--version"))?;
    }
    let not_found = clean_command("sh", &path)
        .args(["-c", "command -v cargo || command -v rustc"])
        .status()?;
    if not_found.success() {
        bail!("cargo or rustc is found on the check's PATH");
    }
    let coverage = dir.join("coverage.md");
    let suite = timed(
        clean_command(bin.join("python"), &path)
            .arg("check_lifecycle.py")
            .arg(&coverage)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(&example),
    )?;
    let installed: u64 = ["licensing-sim", "licensing-proxy", "licensing"]
        .iter()
        .map(|name| file_size(&bin.join(name)))
        .sum::<Result<u64>>()?;
    done(t);
    Ok(vec![
        format!(
            "the wheel installed in {install:.1} s from the local files (with licensing-client \
             and its dependencies); its binaries take {} in the venv",
            mib(installed)
        ),
        format!(
            "Python: the example suite, the lifecycle checks, the tenant suite (pytest-xdist, \
             four workers, one shared simulator) and one coverage report of four workers and \
             their tenants passed in {suite:.1} s; coverage report {}",
            coverage.display()
        ),
    ])
}

/// The `licensing_sandbox-*.whl` files directly in `dir`.
fn wheels(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if !dir.exists() {
        return Ok(found);
    }
    for entry in fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(&format!("{WHEEL_NAME}-")) && name.ends_with(".whl") {
            found.push(path);
        }
    }
    Ok(found)
}

fn only_wheel(dir: &Path) -> Result<PathBuf> {
    match wheels(dir)?.as_slice() {
        [one] => Ok(one.clone()),
        other => bail!(
            "expected one {WHEEL_NAME} wheel in {}, found {other:?}",
            dir.display()
        ),
    }
}
