//! The Python client: the packages of `openapi-python-client` with the configuration and
//! templates of `clients/python/`, and the helper, type-checked with `mypy --strict`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::guide::Examples;
use crate::toolchain::{self, done, remove, run, step};
use crate::{PYTHON, SPECS};

/// Where the guide's example is saved in the generated folder (not the guide's own
/// `example.py`, which may be a reader's).
pub const README_EXAMPLE: &str = "readme_example.py";

/// What goes from `clients/python/` into the generated folder, and the name it gets there.
const HELPER: (&str, &str) = ("src/licensing.py", "licensing.py");
const SCENARIO: (&str, &str) = ("tests/scenario.py", "scenario.py");
/// The control's program, beside the stock order client it imports.
pub const CONTROL: (&str, &str) = ("tests/control.py", "control.py");

/// The generated Python client and the venv that runs it.
pub struct Python {
    pub dir: PathBuf,
    /// The venv's `bin` (the generator, mypy, the interpreter).
    pub bin: PathBuf,
}

impl Python {
    /// `python <file>` with the venv's interpreter, run from `dir`.
    pub fn python(&self, file: &str, dir: &Path) -> Command {
        let mut command = Command::new(self.bin.join("python"));
        command.arg(file).current_dir(dir);
        command
    }
}

/// Generates the packages into `out/python` with the shipped configuration and templates
/// (with the scenario and the guide's example when testing), then type-checks the helper
/// and those programs.
pub fn generate(root: &Path, out: &Path, test: Option<&Examples>) -> Result<Python> {
    let t = step("Python: openapi-python-client with clients/python/{config.yaml,templates}");
    let sources = root.join(PYTHON);
    let bin = toolchain::venv(&sources.join("requirements.txt"), &out.join("venv"))?;
    let dir = out.join("python");
    fs::create_dir_all(&dir)?;
    // The admin client's name before it became `licensing_sandbox_admin`.
    remove(&dir.join("licensing_sandbox"))?;
    for spec in &SPECS {
        generate_package(
            &bin,
            &root.join(spec.path),
            &dir.join(spec.python),
            Some(&sources),
        )?;
    }
    let mut files = vec![HELPER];
    remove(&dir.join(SCENARIO.1))?;
    remove(&dir.join(README_EXAMPLE))?;
    if test.is_some() {
        files.push(SCENARIO);
    }
    toolchain::copy_as(&sources, &dir, &files)?;
    let mut checked: Vec<&str> = files.iter().map(|(_, to)| *to).collect();
    if let Some(examples) = test {
        fs::write(dir.join(README_EXAMPLE), &examples.python.code)?;
        checked.push(README_EXAMPLE);
    }
    // The generated packages' own code is the generator's business (silent); what is
    // checked is that the helper and the programs use their types correctly.
    run(Command::new(bin.join("python"))
        .args([
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
        ])
        .arg(out.join("mypy-cache"))
        .args(&checked)
        .current_dir(&dir))?;
    done(t);
    Ok(Python { dir, bin })
}

/// One package, by the stock command, with the configuration and templates of `shipped`
/// when given. Fails when the generator warns (it then leaves parts out).
pub fn generate_package(
    bin: &Path,
    spec: &Path,
    output: &Path,
    shipped: Option<&Path>,
) -> Result<()> {
    let mut command = Command::new(bin.join("openapi-python-client"));
    command.args(["generate", "--path"]).arg(spec);
    command.args(["--meta", "none"]);
    if let Some(shipped) = shipped {
        command
            .arg("--config")
            .arg(shipped.join("config.yaml"))
            .arg("--custom-template-path")
            .arg(shipped.join("templates"));
    }
    command.arg("--output-path").arg(output).arg("--overwrite");
    // Its post-hooks run ruff, which the venv has.
    command.env("PATH", toolchain::path_with(bin)?);
    eprintln!("$ {}", toolchain::display(&command));
    let result = command
        .output()
        .context("cannot start openapi-python-client")?;
    let text = String::from_utf8_lossy(&result.stdout).to_string()
        + &String::from_utf8_lossy(&result.stderr);
    let text = text.trim();
    if !result.status.success() || text.contains("Warning") || text.contains("Error") {
        bail!("openapi-python-client did not generate cleanly:\n{text}");
    }
    eprintln!("{text}");
    Ok(())
}
