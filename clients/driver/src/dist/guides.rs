//! The pip and npm commands of the guides, run as they are written: every line of the
//! ```` ```sh ```` blocks of README.md's "Other languages" section and of
//! `docs/other-languages.md`'s "The sandbox from pip and npm" section, in a fresh venv
//! and a fresh npm project whose `target/` is the build's (so `target/dist/…` names the
//! files just built), with no Rust toolchain on PATH. The section's ```` ```python ````
//! block is the test file `pytest` runs, its ```` ```js ```` block a module `node` runs.
//!
//! `pip` and `pytest` lines run in the venv, `npm` and `npx` lines in the npm project
//! (npm offline: nothing but the local tarballs); `npx licensing-sim …` is a server,
//! checked to say where it listens (on a port the system picks) and stopped; a `cargo`
//! line is left to the CI step that runs it (`.ci/clients.sh`); any other line fails the
//! check, so that a command added to these sections is run or refused, never skipped.

use std::fs;
use std::io::{BufRead, BufReader, Read as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::{Release, clean_command, path_without_rust, pip_install};
use crate::toolchain::{self, done, run, step};

/// Seconds a server line may take to stop after SIGTERM.
const STOP_SECS: u64 = 10;

/// The sections whose commands are run: (file, heading).
pub const SECTIONS: [(&str, &str); 2] = [
    ("README.md", "## Other languages"),
    ("docs/other-languages.md", "## The sandbox from pip and npm"),
];

/// One line of a fenced block, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub at: String,
    pub text: String,
}

/// A section's blocks: the shell lines, and the code of its `python` and `js` blocks.
#[derive(Debug, Default)]
pub struct Blocks {
    pub sh: Vec<Line>,
    pub python: Vec<String>,
    pub js: Vec<String>,
}

/// The blocks of the section under `heading` of `text` (to the next `## ` heading).
pub fn blocks(file: &str, text: &str, heading: &str) -> Result<Blocks> {
    let mut lines = text.lines().enumerate();
    lines
        .by_ref()
        .find(|(_, l)| l.trim_end() == heading)
        .with_context(|| format!("{file} has no section {heading:?}"))?;
    let mut out = Blocks::default();
    let mut fence: Option<(String, String)> = None;
    for (i, line) in lines {
        if fence.is_none() && line.starts_with("## ") {
            break;
        }
        match (&mut fence, line.trim_end()) {
            (None, l) if l.starts_with("```") => {
                fence = Some((l.trim_start_matches('`').to_owned(), String::new()));
            }
            (Some((info, code)), "```") => {
                match info.as_str() {
                    "python" => out.python.push(std::mem::take(code)),
                    "js" => out.js.push(std::mem::take(code)),
                    _ => {}
                }
                fence = None;
            }
            (Some((info, code)), l) => {
                if info == "sh" && !l.trim().is_empty() {
                    out.sh.push(Line {
                        at: format!("{file}:{}", i + 1),
                        text: l.to_owned(),
                    });
                }
                code.push_str(l);
                code.push('\n');
            }
            (None, _) => {}
        }
    }
    if fence.is_some() {
        bail!("{file}: a block of {heading:?} is never closed");
    }
    Ok(out)
}

/// What a shell line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `pip …`, `pytest …`: in the venv.
    Python,
    /// `npm …`, `npx …`: in the npm project.
    Node,
    /// `npx licensing-sim …`: a server, stopped once it listens.
    Server,
    /// `cargo …`: run by another CI step.
    Cargo,
}

pub fn kind(line: &Line) -> Result<Kind> {
    let mut words = line.text.split_whitespace();
    Ok(match (words.next(), words.next()) {
        (Some("pip" | "pytest"), _) => Kind::Python,
        (Some("npx"), Some("licensing-sim")) => Kind::Server,
        (Some("npm" | "npx"), _) => Kind::Node,
        (Some("cargo"), _) => Kind::Cargo,
        _ => bail!(
            "{}: `{}`: the guides' check runs pip, pytest, npm and npx lines (and leaves cargo \
             lines to .ci/clients.sh); run this one in CI or leave it out of the section",
            line.at,
            line.text
        ),
    })
}

/// Runs every line of [`SECTIONS`]; returns the summary's lines.
pub fn check(root: &Path, release: &Release, target: &Path) -> Result<Vec<String>> {
    let t = step("the guides' pip and npm commands, as written, no Rust toolchain on PATH");
    let dir = release.dist.join("check").join("guides");
    toolchain::remove(&dir)?;
    fs::create_dir_all(&dir)?;
    // `target/dist/…` in the guides: this build's files, whatever the target directory.
    std::os::unix::fs::symlink(target, dir.join("target"))?;
    run(Command::new("python3")
        .args(["-m", "venv"])
        .arg(dir.join("venv")))?;
    let python_path = path_without_rust(&dir.join("venv").join("bin"))?;
    let node_path = path_without_rust(&dir.join("node_modules").join(".bin"))?;
    fs::write(
        dir.join("package.json"),
        "{\"name\": \"partner-guide\", \"private\": true, \"type\": \"module\"}\n",
    )?;
    // The project's pytest settings: its tests here, not in the build's `target/`.
    fs::write(
        dir.join("pytest.ini"),
        "[pytest]\nnorecursedirs = target venv node_modules\n",
    )?;
    // The test runner the pytest line needs, hash-pinned as the example suite's.
    let requirements = root
        .join(super::python::SOURCES)
        .join("example/requirements.txt");
    run(pip_install(&dir.join("venv/bin/python"), &python_path)
        .args(["--require-hashes", "--no-deps", "-r"])
        .arg(requirements))?;
    let mut ran = 0;
    let mut left = Vec::new();
    for (file, heading) in SECTIONS {
        let text =
            fs::read_to_string(root.join(file)).with_context(|| format!("cannot read {file}"))?;
        let blocks = blocks(file, &text, heading)?;
        for (i, code) in blocks.python.iter().enumerate() {
            fs::write(dir.join(format!("test_guide_{i}.py")), code)?;
        }
        for line in &blocks.sh {
            eprintln!("{}: $ {}", line.at, line.text);
            match kind(line)? {
                Kind::Python => {
                    run(&mut shell(&line.text, &python_path, &dir))?;
                    if line.text.starts_with("pytest") {
                        coverage_written(line, &dir)?;
                    }
                }
                Kind::Node => run(&mut shell(&line.text, &node_path, &dir))?,
                Kind::Server => server(line, &node_path, &dir)?,
                Kind::Cargo => {
                    left.push(line.text.clone());
                    continue;
                }
            }
            ran += 1;
        }
        for (i, code) in blocks.js.iter().enumerate() {
            let module = format!("guide_{i}.mjs");
            fs::write(dir.join(&module), code)?;
            run(clean_command("node", &node_path)
                .arg(&module)
                .current_dir(&dir))?;
            ran += 1;
        }
    }
    done(t);
    let mut lines = vec![format!(
        "the guides: {ran} commands and blocks of README.md and docs/other-languages.md ran \
         as written from target/dist"
    )];
    if !left.is_empty() {
        lines.push(format!("  left to .ci/clients.sh: {}", left.join("; ")));
    }
    Ok(lines)
}

/// `sh -c LINE` in `dir`, with a clean environment on `path`; npm kept off the registry.
fn shell(line: &str, path: &std::ffi::OsString, dir: &Path) -> Command {
    let mut command = clean_command("sh", path);
    command
        .args(["-c", line])
        .env("npm_config_offline", "true")
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(dir);
    command
}

/// The file a pytest line's `--licensing-coverage FILE` names was written and names an
/// operation's row.
fn coverage_written(line: &Line, dir: &Path) -> Result<()> {
    let mut words = line.text.split_whitespace();
    let Some(file) = words
        .by_ref()
        .find(|w| *w == "--licensing-coverage")
        .and(words.next())
    else {
        return Ok(());
    };
    let report = fs::read_to_string(dir.join(file))
        .with_context(|| format!("{}: pytest wrote no {file}", line.at))?;
    if !report.contains("batchOrder") {
        bail!("{}: {file} names no operation:\n{report}", line.at);
    }
    Ok(())
}

/// A server line: it must print `listening on http://…` (on a port the system picks:
/// `LICENSING_SIM_ADDR`), then its process group (npx, the launcher, the program) is sent
/// SIGTERM and must be gone within [`STOP_SECS`].
fn server(line: &Line, path: &std::ffi::OsString, dir: &Path) -> Result<()> {
    use std::os::unix::process::CommandExt as _;
    let mut child = shell(&format!("exec {}", line.text), path, dir)
        .env("LICENSING_SIM_ADDR", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .with_context(|| format!("{}: cannot start `{}`", line.at, line.text))?;
    let group = format!("-{}", child.id());
    let mut first = String::new();
    let read = BufReader::new(child.stdout.take().context("stdout")?)
        .take(4096)
        .read_line(&mut first);
    let signal = |name: &str| Command::new("kill").args([name, "--", &group]).status();
    signal("-TERM")?;
    let deadline = Instant::now() + Duration::from_secs(STOP_SECS);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever of the group is left (nothing, when it stopped as it should).
    let _ = signal("-KILL");
    let _ = child.wait();
    read?;
    if !first.starts_with("listening on http://") {
        bail!(
            "{}: `{}` printed {first:?}, not where it listens",
            line.at,
            line.text
        );
    }
    if status.is_none() {
        bail!(
            "{}: `{}` was still running {STOP_SECS} s after SIGTERM",
            line.at,
            line.text
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = "# Guide\n\n## Other\n\n```sh\nnot this\n```\n\n## Ours\n\nText.\n\n\
        ```sh\npip install x\n\npytest -q   # a comment\n```\n\n```python\ndef test_a():\n    pass\n```\n\n\
        ```js\nconsole.log(1);\n```\n\n```sh\nnpx licensing-sim --seed demo\ncargo xtask dist\n```\n\n## Next\n\n```sh\nnor this\n```\n";

    #[test]
    fn the_section_blocks_and_nothing_else() {
        let blocks = blocks("g.md", GUIDE, "## Ours").unwrap();
        let texts: Vec<&str> = blocks.sh.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "pip install x",
                "pytest -q   # a comment",
                "npx licensing-sim --seed demo",
                "cargo xtask dist"
            ]
        );
        assert_eq!(blocks.sh[0].at, "g.md:14");
        assert_eq!(blocks.python, ["def test_a():\n    pass\n"]);
        assert_eq!(blocks.js, ["console.log(1);\n"]);
        let kinds: Vec<Kind> = blocks.sh.iter().map(|l| kind(l).unwrap()).collect();
        assert_eq!(
            kinds,
            [Kind::Python, Kind::Python, Kind::Server, Kind::Cargo]
        );
    }

    #[test]
    fn an_unknown_command_or_section_is_refused() {
        let line = Line {
            at: "g.md:3".into(),
            text: "curl https://example.invalid".into(),
        };
        let error = kind(&line).unwrap_err().to_string();
        assert!(error.starts_with("g.md:3: `curl"), "{error}");
        let error = blocks("g.md", GUIDE, "## Missing").unwrap_err().to_string();
        assert_eq!(error, "g.md has no section \"## Missing\"");
        let error = blocks("g.md", "## Ours\n```sh\npip x\n", "## Ours")
            .unwrap_err()
            .to_string();
        assert!(error.contains("never closed"), "{error}");
    }

    /// The guides hold their sections, and every line of them is one the check runs.
    #[test]
    fn the_guides_lines_are_all_runnable() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for (file, heading) in SECTIONS {
            let text = fs::read_to_string(root.join(file)).unwrap();
            let blocks = blocks(file, &text, heading).unwrap();
            assert!(!blocks.sh.is_empty(), "{file}: no commands");
            for line in &blocks.sh {
                kind(line).unwrap();
            }
        }
    }
}
