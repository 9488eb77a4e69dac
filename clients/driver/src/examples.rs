//! The two examples of `docs/other-languages.md` (see [`crate::guide`]) run as the guide
//! says, from the generated folders (`node_modules/.bin/tsx`, `../venv/bin/python`),
//! against a fresh `licensing-sim --seed demo` (the binary `cargo run -p licensing-sim
//! --features bin -- --seed demo` runs). The one change to their code: that simulator
//! listens on a free port, so the base URL `http://127.0.0.1:8080` becomes its URL. They
//! are saved as `readme-example.ts` and `readme_example.py` (not the guide's `example.ts`
//! and `example.py`, which may be a reader's own), and type-checked verbatim with the
//! helpers (`tsc`, `mypy --strict`) when the clients are generated. What each prints must
//! be what its comments claim.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::guide::{self, Example, Examples};
use crate::python::{self, Python};
use crate::simulator::Simulator;
use crate::toolchain::{self, done, step};
use crate::typescript::{self, TypeScript};

/// How long a guide's example may run.
pub const TIME_LIMIT: Duration = Duration::from_secs(120);

/// The guide's two examples, each from its generated folder against a fresh
/// `licensing-sim --seed demo` (the binary `sim`), their output checked against their
/// comments.
pub fn run(
    sim: &Path,
    out: &Path,
    examples: &Examples,
    ts: &TypeScript,
    py: &Python,
) -> Result<()> {
    let runs: [(&Example, &Path, &str, Command); 2] = [
        (
            &examples.typescript,
            &ts.dir,
            typescript::README_EXAMPLE,
            ts.tsx(typescript::README_EXAMPLE),
        ),
        (
            &examples.python,
            &py.dir,
            python::README_EXAMPLE,
            py.python(python::README_EXAMPLE, &py.dir),
        ),
    ];
    for (example, dir, file, mut command) in runs {
        let fence = example.flavor.fence;
        let t = step(&format!(
            "{}:{}, the ```{fence} block of \"{}\", against licensing-sim --seed demo",
            guide::FILE,
            example.line - 1,
            guide::SECTION.trim_start_matches('#').trim_start()
        ));
        let log = out.join(format!("sim-readme-{fence}.log"));
        let simulator = Simulator::start(sim, &["--seed", "demo"], &log)?;
        fs::write(dir.join(file), example.pointed_at(&simulator.url))?;
        eprintln!(
            "{file}: the block verbatim, with {} replaced by {}",
            guide::BASE_URL,
            simulator.url
        );
        let (status, stdout, stderr) = run_captured(&mut command, TIME_LIMIT)?;
        eprint!("{stdout}");
        let shown = || {
            format!(
                "its code (run as {} with the base URL replaced):\n{}\nits stdout:\n{stdout}\n\
                 its stderr:\n{stderr}",
                dir.join(file).display(),
                example.code
            )
        };
        if !status.success() {
            bail!(
                "{}:{}: the ```{fence} block failed ({status}); {}",
                guide::FILE,
                example.line - 1,
                shown()
            );
        }
        let journal = simulator.journal()?;
        let checked = example
            .check_output(&stdout)
            .and_then(|()| example.check_journal(&journal));
        if let Err(problems) = checked {
            bail!(
                "{}:{}: the ```{fence} block does not print what it claims:\n  {}\n\
                 (the simulator answered: {})\n{}",
                guide::FILE,
                example.line - 1,
                problems.join("\n  "),
                guide::summary(&journal),
                shown()
            );
        }
        for claim in &example.claims {
            eprintln!("as {}:{} claims: {}", guide::FILE, claim.line, claim.text);
        }
        eprintln!(
            "{}: the simulator answered {}",
            example.flavor.language,
            guide::summary(&journal)
        );
        done(t);
    }
    Ok(())
}

/// Runs a command with its output captured, killing it after `limit`: its status, stdout
/// and stderr; fails with what it printed when it times out.
pub(crate) fn run_captured(
    command: &mut Command,
    limit: Duration,
) -> Result<(ExitStatus, String, String)> {
    let line = toolchain::display(command);
    eprintln!("$ {line}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{line}`"))?;
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // A process the command started may hold the pipes open after a kill.
    let wait = Duration::from_secs(if status.is_some() { 30 } else { 2 });
    let stdout = stdout.recv_timeout(wait).unwrap_or_default();
    let stderr = stderr.recv_timeout(wait).unwrap_or_default();
    match status {
        Some(status) => Ok((status, stdout, stderr)),
        None => bail!(
            "`{line}` did not finish in {} s; its stdout:\n{stdout}\nits stderr:\n{stderr}",
            limit.as_secs()
        ),
    }
}

/// A pipe read to its end on a thread of its own.
fn read_all<R: Read + Send + 'static>(pipe: Option<R>) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = send.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receive
}
