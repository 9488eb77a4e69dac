//! Running the other languages' tools: Node packages and a Python venv installed from
//! committed lock files into folders under cargo's target directory, and the commands run
//! with their output shown. The clients use it, and so do xtask's jobs that drive Node or
//! Python tools (the reference pages, the console checks).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Prints a step heading and returns when it started.
pub fn step(what: &str) -> Instant {
    eprintln!("\n==> {what}");
    Instant::now()
}

/// Prints how long a step took.
pub fn done(started: Instant) {
    eprintln!("    ({:.1} s)", started.elapsed().as_secs_f64());
}

/// The workspace's packages and target directory, from `cargo metadata --no-deps`.
pub fn metadata(root: &Path) -> Result<Value> {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

/// Cargo's target directory (`CARGO_TARGET_DIR` included), where every tool and output
/// goes: it is git-ignored and shared with the rest of the build.
pub fn target_dir(root: &Path) -> Result<PathBuf> {
    let meta = metadata(root)?;
    Ok(PathBuf::from(
        meta["target_directory"]
            .as_str()
            .context("cargo metadata without target_directory")?,
    ))
}

/// Runs a command with its output shown; fails with the command line when it fails.
pub fn run(command: &mut Command) -> Result<()> {
    let line = display(command);
    eprintln!("$ {line}");
    let status = command
        .status()
        .with_context(|| format!("cannot start `{line}`"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// The first line a tool prints for `--version`, or why it cannot be run.
pub fn version(program: &str, hint: &str) -> Result<String> {
    let output = Command::new(program)
        .arg("--version")
        .output()
        .with_context(|| format!("`{program}` not found: {hint}"))?;
    let text = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    Ok(text.lines().next().unwrap_or_default().trim().to_owned())
}

/// `npm ci` of `lock_dir`'s package.json and package-lock.json into `dir`, skipped when
/// `dir` already holds exactly those files' packages.
pub fn npm_ci(lock_dir: &Path, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)?;
    let mut stamp = String::new();
    for file in ["package.json", "package-lock.json"] {
        let text = fs::read_to_string(lock_dir.join(file))
            .with_context(|| format!("cannot read {}", lock_dir.join(file).display()))?;
        fs::write(dir.join(file), &text)?;
        stamp.push_str(&text);
    }
    let stamp_file = dir.join("node_modules").join(".xtask-stamp");
    if fs::read_to_string(&stamp_file).is_ok_and(|s| s == stamp) {
        eprintln!("node packages of {} up to date", dir.display());
        return Ok(());
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir))?;
    fs::write(stamp_file, stamp)?;
    Ok(())
}

/// A venv at `dir` holding exactly the hash-pinned `requirements` (re-created when they
/// change); returns its `bin` directory.
pub fn venv(requirements: &Path, dir: &Path) -> Result<PathBuf> {
    let wanted = fs::read_to_string(requirements)
        .with_context(|| format!("cannot read {}", requirements.display()))?;
    let bin = dir.join("bin");
    let stamp_file = dir.join(".xtask-stamp");
    if bin.join("python").exists() && fs::read_to_string(&stamp_file).is_ok_and(|s| s == wanted) {
        eprintln!("python packages of {} up to date", dir.display());
        return Ok(bin);
    }
    run(Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(dir))?;
    run(Command::new(bin.join("pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--require-hashes",
            "--no-deps",
            "-r",
        ])
        .arg(requirements))?;
    fs::write(stamp_file, wanted)?;
    Ok(bin)
}

/// Copies each `(source, name)` of `files` from `from` into `to`, as `to/name`.
pub fn copy_as(from: &Path, to: &Path, files: &[(&str, &str)]) -> Result<()> {
    fs::create_dir_all(to)?;
    for (source, name) in files {
        let (source, target) = (from.join(source), to.join(name));
        fs::copy(&source, &target)
            .with_context(|| format!("cannot copy {} to {}", source.display(), target.display()))?;
    }
    Ok(())
}

/// Removes a file or a directory; nothing to remove is fine.
pub fn remove(path: &Path) -> Result<()> {
    let result = if path.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Copies `files` from `from` into `to`.
pub fn copy(from: &Path, to: &Path, files: &[&str]) -> Result<()> {
    fs::create_dir_all(to)?;
    for file in files {
        fs::copy(from.join(file), to.join(file)).with_context(|| {
            format!(
                "cannot copy {} to {}",
                from.join(file).display(),
                to.display()
            )
        })?;
    }
    Ok(())
}

/// `PATH` with `dir` first, so that tools a tool runs (the Python generator's `ruff`) are
/// found in the same place.
pub fn path_with(dir: &Path) -> Result<std::ffi::OsString> {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    Ok(std::env::join_paths(paths)?)
}

/// A command as a shell would show it.
pub fn display(command: &Command) -> String {
    let mut line = command.get_program().to_string_lossy().to_string();
    for arg in command.get_args() {
        let arg = arg.to_string_lossy();
        if arg.contains(' ') {
            line.push_str(&format!(" '{arg}'"));
        } else {
            line.push(' ');
            line.push_str(&arg);
        }
    }
    line
}
