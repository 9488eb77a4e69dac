//! The Go client, `clients/go`: a Go module whose packages `order`, `member` and
//! `sandbox/admin` oapi-codegen generates from the specs (pinned in `clients/go/tools/go.mod`),
//! beside the helper `licensing` and the test helper `sandbox`.
//!
//! Unlike the TypeScript and Python clients, the generated code is committed: `go get`
//! fetches a module as its repository holds it and runs no generator, so what a partner
//! gets is what is checked in. This module proves it current: `go generate ./...`
//! regenerates it in place, and a file that changed fails the run, naming it. Then
//! `go vet ./...`; with `--test`, `go test ./...` (each test starts its own sandbox through
//! the `sandbox` package, on this build's simulator) and the guide's Go example, its module
//! made with the guide's own `go get` commands.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::examples;
use crate::guide::{self, Example};
use crate::simulator::Simulator;
use crate::toolchain::{done, remove, run, step};

/// The Go module, relative to the repository's root.
pub const GO: &str = "clients/go";

/// The section of the guide whose `sh` and `go` blocks are run.
pub const SECTION: &str = "## Go";

/// The oldest Go the module builds with (its go.mod's `go` line; oapi-codegen's runtime
/// v1.9.0 asks for 1.26).
const MINIMUM: (u32, u32) = (1, 26);

/// The files oapi-codegen writes, relative to the module.
const GENERATED: [&str; 3] = [
    "order/order.gen.go",
    "member/member.gen.go",
    "sandbox/admin/admin.gen.go",
];

/// The Go module, checked.
pub struct Go {
    pub dir: PathBuf,
    /// `go version`'s words, for the log.
    pub version: String,
}

/// Checks that Go is there and new enough, that the committed generated code is what the
/// pinned generator makes of the specs, and that `go vet` passes.
pub fn check(root: &Path) -> Result<Go> {
    let t = step("Go: oapi-codegen (clients/go/tools/go.mod), the generated code current, go vet");
    let version = go_version()?;
    let dir = root.join(GO);
    let before = GENERATED
        .iter()
        .map(|file| fs::read(dir.join(file)).unwrap_or_default())
        .collect::<Vec<_>>();
    run(Command::new("go")
        .args(["generate", "./..."])
        .current_dir(&dir))?;
    let stale: Vec<&str> = GENERATED
        .iter()
        .zip(&before)
        .filter(|(file, old)| fs::read(dir.join(file)).ok().as_ref() != Some(*old))
        .map(|(file, _)| *file)
        .collect();
    if !stale.is_empty() {
        bail!(
            "{GO}: {} differed from what oapi-codegen generates from the specs; regenerated \
             in place (`go generate ./...` in {GO}): review and commit them",
            stale.join(", ")
        );
    }
    eprintln!("generated code current: {}", GENERATED.join(", "));
    run(Command::new("go").args(["vet", "./..."]).current_dir(&dir))?;
    done(t);
    Ok(Go { dir, version })
}

/// `go version`, refused with what to do when Go is missing or older than [`MINIMUM`].
pub(crate) fn go_version() -> Result<String> {
    let hint = format!(
        "the Go client ({GO}) needs Go {}.{} or later on PATH: install it (its go.mod asks for \
         that version; Debian's golang-go is older)",
        MINIMUM.0, MINIMUM.1
    );
    let output = Command::new("go")
        .arg("version")
        .output()
        .with_context(|| format!("`go` not found: {hint}"))?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    match release(&text) {
        Some(found) if found >= MINIMUM => Ok(text),
        _ => bail!("`go version` says {text:?}: {hint}"),
    }
}

/// The major and minor release `go version` names: `go version go1.26.8 linux/amd64`.
fn release(text: &str) -> Option<(u32, u32)> {
    text.split_whitespace().find_map(|word| {
        let mut parts = word.strip_prefix("go")?.split(['.', '-', 'r', 'b']);
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    })
}

/// `go test ./...` in the module, its sandboxes started from `sim`.
pub fn test(go: &Go, sim: &Path) -> Result<()> {
    let t = step(&format!("Go: go test ./... ({})", go.version));
    // -count=1: a cached pass would not have run against this build's simulator.
    run(Command::new("go")
        .args(["test", "-count=1", "./..."])
        .env("LICENSING_SIM_BIN", sim)
        .current_dir(&go.dir))?;
    done(t);
    Ok(())
}

/// The guide's Go example: its `go` block as main.go of a module of its own beside a link
/// to this repository, made by the section's `sh` block as written, then run against a
/// fresh `licensing-sim --seed demo`, its output checked against its comments.
pub fn example(root: &Path, out: &Path, sim: &Path) -> Result<()> {
    let path = root.join(guide::FILE);
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let (commands, program) = blocks(&text)?;
    let t = step(&format!(
        "{}:{}, the ```go block of \"{}\", against licensing-sim --seed demo",
        guide::FILE,
        program.line - 1,
        SECTION.trim_start_matches('#').trim_start()
    ));
    // The guide's commands name the clone as ../licensing-sdk, beside the partner's module.
    let base = out.join("go-guide");
    remove(&base)?;
    let partner = base.join("partner");
    fs::create_dir_all(&partner)?;
    std::os::unix::fs::symlink(root, base.join("licensing-sdk"))
        .context("cannot link the repository beside the guide's module")?;
    let simulator = Simulator::start(sim, &["--seed", "demo"], &out.join("sim-readme-go.log"))?;
    // Written first: the commands end with `go mod tidy`, which keeps what main.go imports.
    fs::write(partner.join("main.go"), program.pointed_at(&simulator.url))?;
    run(Command::new("bash")
        .args(["-euo", "pipefail", "-c", &commands])
        .current_dir(&partner))?;
    let mut command = Command::new("go");
    command.args(["run", "."]).current_dir(&partner);
    let (status, stdout, stderr) = examples::run_captured(&mut command, examples::TIME_LIMIT)?;
    eprint!("{stdout}");
    let journal = simulator.journal()?;
    let checked = if status.success() {
        program
            .check_output(&stdout)
            .and_then(|()| program.check_journal(&journal))
    } else {
        Err(vec![format!("`go run .` failed ({status})")])
    };
    if let Err(problems) = checked {
        bail!(
            "{}:{}: the ```go block does not do what it claims:\n  {}\n(the simulator \
             answered: {})\nits stdout:\n{stdout}\nits stderr:\n{stderr}",
            guide::FILE,
            program.line - 1,
            problems.join("\n  "),
            guide::summary(&journal)
        );
    }
    eprintln!("Go: the simulator answered {}", guide::summary(&journal));
    done(t);
    Ok(())
}

/// The section's `sh` block (the commands that make the partner's module) and its `go`
/// block (the program).
fn blocks(text: &str) -> Result<(String, Example)> {
    let program = guide::section_example(text, SECTION, guide::GO)?;
    let commands = guide::section_block(text, SECTION, "sh")?;
    if !commands.contains("go get ") {
        bail!(
            "{}: the ```sh block of \"{SECTION}\" has no `go get`",
            guide::FILE
        );
    }
    Ok((commands, program))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guide_has_a_go_section_with_its_commands_and_program() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = fs::read_to_string(root.join(guide::FILE)).unwrap();
        let (commands, program) = blocks(&text).unwrap();
        assert!(commands.contains("go get example.com/licensing-sdk/clients/go@v0.0.0"));
        assert!(commands.ends_with("go mod tidy\n"), "{commands}");
        assert!(program.code.starts_with("package main\n"));
        assert!(program.claims.iter().any(|c| c.business_code().is_some()));
    }

    #[test]
    fn go_releases_are_read_from_go_version() {
        assert_eq!(release("go version go1.26.8 linux/amd64"), Some((1, 26)));
        assert_eq!(release("go version go1.27rc1 linux/arm64"), Some((1, 27)));
        assert_eq!(release("go version go1.9 linux/amd64"), Some((1, 9)));
        assert!(release("go version go1.9 linux/amd64").unwrap() < MINIMUM);
        assert_eq!(release("go version devel +abc linux/amd64"), None);
    }

    #[test]
    fn every_generated_file_is_committed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for file in GENERATED {
            let text = fs::read_to_string(root.join(GO).join(file)).unwrap();
            assert!(text.starts_with("// Package "), "{file}");
            assert!(text.contains("DO NOT EDIT"), "{file}");
        }
    }
}
