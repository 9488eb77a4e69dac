//! `cargo xtask ci-step NAME [--record] [--always] -- COMMAND...`: one of `.ci/run`'s
//! keyed steps, run only when what it checks changed.
//!
//! Each step names its inputs ([`STEPS`], read by [`crate::inputs`]). While their digest
//! is the one `.ci/checked/NAME` holds, written by a run of the same command that passed,
//! the step's verdict cannot differ and the command is not run; otherwise it runs, and
//! with `--record` (CI's `LICENSING_CI_RECORD=1`) a pass writes the new digest there, to
//! be committed. `--always` (`LICENSING_CI_ALL=1`) runs it whatever the record says; a
//! failure never touches the record. `--explain` prints each input with its own digest,
//! to compare two machines' views of a step.

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::inputs::{Inputs, RECORDS, Roots};

/// A keyed step: its name (the record's file name) and what it is made of.
pub struct Step {
    pub name: &'static str,
    pub inputs: Inputs,
}

const RUST: &[&str] = &["rustc", "-vV"];
const CARGO: &[&str] = &["cargo", "-V"];
const PYTHON: &[&str] = &["python3", "--version"];
const NODE: &[&str] = &["node", "--version"];
const NPM: &[&str] = &["npm", "--version"];
// The browsers as Debian's packages: the version installed, else the one apt would
// install, so that a machine that has not installed them yet (the steps install them when
// they run) sees the same digest as the one that recorded it.
const CHROMIUM: &[&str] = &["sh", "-c", DEBIAN_CHROMIUM];
const FIREFOX: &[&str] = &["sh", "-c", DEBIAN_FIREFOX];
const DEBIAN_CHROMIUM: &str = "dpkg-query -W -f='${Version}' chromium 2>/dev/null || \
     apt-cache policy chromium | sed -n 's/^ *Candidate: //p'";
const DEBIAN_FIREFOX: &str = "dpkg-query -W -f='${Version}' firefox-esr 2>/dev/null || \
     apt-cache policy firefox-esr | sed -n 's/^ *Candidate: //p'";

/// Whether a step builds its roots' tests or examples (their dev-dependencies count).
enum Dev {
    No,
    Also,
}

const fn keyed(
    name: &'static str,
    roots: Roots,
    dev: Dev,
    paths: &'static [&'static str],
    commands: &'static [&'static [&'static str]],
    env: &'static [&'static str],
) -> Step {
    let dev = matches!(dev, Dev::Also);
    Step {
        name,
        inputs: Inputs {
            roots,
            dev,
            paths,
            commands,
            env,
        },
    }
}

/// Every keyed step of `.ci/run`. Where a step runs binaries of the whole workspace (the
/// test build's, `LICENSING_BINARIES`), its roots are every member.
pub const STEPS: &[Step] = &[
    keyed(
        "tls",
        Roots::Named(&["licensing-sdk"]),
        Dev::Also,
        &[".ci/tls.sh", ".cargo", "tests"],
        &[RUST, CARGO, &["pkg-config", "--modversion", "openssl"]],
        &[],
    ),
    keyed(
        "packages",
        Roots::Published,
        Dev::No,
        &[".ci/package.sh", ".cargo", "quickstart"],
        &[RUST, CARGO, PYTHON],
        &[],
    ),
    keyed(
        "schemathesis",
        Roots::Named(&["licensing-sim"]),
        Dev::No,
        &[
            ".ci/schemathesis.sh",
            ".ci/schemathesis.toml",
            ".ci/schemathesis_hooks.py",
            ".cargo",
            "spec",
            "sim/spec",
        ],
        &[RUST, CARGO, PYTHON],
        &["SCHEMATHESIS_SEED", "SCHEMATHESIS_MAX_EXAMPLES"],
    ),
    keyed(
        "lints",
        Roots::All,
        Dev::Also,
        &["."],
        &[RUST, CARGO, &["cargo", "clippy", "-V"], &["rustdoc", "-V"]],
        &[],
    ),
    keyed(
        "quickstart",
        Roots::Named(&["licensing-quickstart"]),
        Dev::No,
        &[".ci/quickstart.sh", "README.md", ".cargo", "quickstart"],
        &[RUST, CARGO],
        &[],
    ),
    keyed(
        "clients",
        Roots::All,
        Dev::No,
        &[
            ".ci/clients.sh",
            ".cargo",
            "clients",
            "docs",
            "spec",
            "sim/spec",
            "xtask",
        ],
        &[
            RUST,
            CARGO,
            PYTHON,
            NODE,
            NPM,
            CHROMIUM,
            &["go", "version"],
            &["java", "-version"],
            &["mvn", "-v"],
        ],
        &["CHROMIUM"],
    ),
    keyed(
        "console",
        Roots::All,
        Dev::No,
        &[".ci/console.sh", ".cargo", "sim", "xtask"],
        &[RUST, CARGO, NODE, NPM, CHROMIUM, FIREFOX],
        &["CHROMIUM", "FIREFOX"],
    ),
    keyed(
        "dist",
        Roots::All,
        Dev::Also,
        &[
            ".ci/dist.sh",
            ".cargo",
            "clients",
            "docs",
            "examples",
            "README.md",
        ],
        &[RUST, CARGO, PYTHON, NODE, NPM, &["strip", "--version"]],
        &[],
    ),
    keyed(
        "spec-diff",
        Roots::All,
        Dev::Also,
        &[
            ".ci/spec-diff.sh",
            ".ci/api-baseline",
            ".cargo",
            "CHANGELOG.md",
            "clients",
            "codegen",
            "spec",
            "spec-diff",
        ],
        &[
            RUST,
            CARGO,
            PYTHON,
            NODE,
            NPM,
            &["go", "version"],
            &["javac", "-version"],
            &["java", "-version"],
            &["mvn", "-v"],
            // The base the head's specs are compared with: the last release.
            &["git", "log", "-1", "--format=%H", "--", ".ci/api-baseline"],
        ],
        &["SPEC_DIFF_BASE", "SPEC_DIFF_CORPUS"],
    ),
    keyed(
        "schemas",
        Roots::All,
        Dev::No,
        &[
            ".ci/schemas.sh",
            ".ci/schema_check.cjs",
            ".ci/schema_roundtrip.py",
            ".ci/schema_validate.py",
            ".cargo",
            "schemas",
            "spec",
            "tests/schema-samples",
        ],
        &[RUST, CARGO, PYTHON, NODE, NPM],
        &[],
    ),
    keyed(
        "curl-tour",
        Roots::Named(&["licensing-sim"]),
        Dev::No,
        &[".ci/curl-tour.sh", ".cargo", "sim/README.md"],
        &[RUST, CARGO, &["curl", "--version"]],
        &[],
    ),
    keyed(
        "bench-smoke",
        Roots::All,
        Dev::Also,
        &[
            ".ci/bench-smoke.sh",
            ".cargo",
            "bench",
            "bench-load",
            "benches",
            "clients",
        ],
        &[RUST, CARGO, PYTHON, NODE, NPM],
        &[],
    ),
];

/// How a step is run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Options {
    /// Write the digest when the command passes.
    pub record: bool,
    /// Run the command whatever the record says.
    pub always: bool,
}

/// What became of a step.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Skipped,
    Passed,
    Failed,
}

/// The step called `name`.
pub fn step(name: &str) -> Result<&'static Step> {
    STEPS.iter().find(|s| s.name == name).with_context(|| {
        let names: Vec<_> = STEPS.iter().map(|s| s.name).collect();
        format!("no keyed step {name:?}; the steps: {}", names.join(", "))
    })
}

/// `cargo xtask ci-step NAME --explain`: each input's own digest, one a line.
pub fn explain(root: &Path, name: &str) -> Result<()> {
    for (input, bytes) in step(name)?.inputs.collect(root)? {
        println!("{:x}  {input}", Sha256::digest(&bytes));
    }
    Ok(())
}

/// Runs `command` in `root` unless the record of `name` holds the digest of `inputs`.
pub fn run(
    root: &Path,
    name: &str,
    inputs: &Inputs,
    options: Options,
    command: &[String],
) -> Result<Outcome> {
    let (program, args) = command
        .split_first()
        .context("ci-step: no command after `--`")?;
    let record = root.join(RECORDS).join(name);
    let before = inputs.digest(root)?;
    let recorded = match fs::read_to_string(&record) {
        Ok(text) => text
            .lines()
            .find_map(|l| l.strip_prefix("digest = "))
            .map(str::to_string),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", record.display())),
    };
    let matches = recorded.as_deref() == Some(before.as_str());
    if matches && !options.always {
        println!(
            "ci-step {name}: skipped: its inputs are those {RECORDS}/{name} records a passing \
             run of (digest {before}); LICENSING_CI_ALL=1 (--always) runs it anyway"
        );
        return Ok(Outcome::Skipped);
    }
    println!(
        "ci-step {name}: running `{}` (inputs' digest {before}; recorded: {})",
        command.join(" "),
        recorded.as_deref().unwrap_or("none")
    );
    let status = Command::new(program)
        .args(args)
        .current_dir(root)
        .status()
        .with_context(|| format!("ci-step {name}: running {program}"))?;
    if !status.success() {
        eprintln!("ci-step {name}: FAILED ({status}); {RECORDS}/{name} is left as it was");
        return Ok(Outcome::Failed);
    }
    if options.record {
        if inputs.digest(root)? != before {
            bail!("ci-step {name}: the command changed the step's own inputs; nothing recorded");
        }
        fs::create_dir_all(record.parent().context("the records' folder")?)?;
        let text = format!(
            "# `cargo xtask ci-step {name}`: the digest of the step's inputs when it last \
             passed\ndigest = {before}\n"
        );
        let partial = record.with_extension("partial");
        fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
        fs::rename(&partial, &record).with_context(|| format!("writing {}", record.display()))?;
        println!("ci-step {name}: passed; recorded in {RECORDS}/{name}");
    } else if !matches {
        println!(
            "ci-step {name}: passed; not recorded (LICENSING_CI_RECORD=1, or --record, writes \
             {RECORDS}/{name}: committed, later runs skip the step while its inputs stay)"
        );
    }
    Ok(Outcome::Passed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::tests::{workspace, write};

    fn lines(root: &Path) -> usize {
        fs::read_to_string(root.join("target/ran"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    /// Run, skipped while the inputs match the record, run again on a change, on
    /// `--always`; a failure leaves the record alone; a command that changes its own inputs
    /// records nothing.
    #[test]
    fn runs_only_when_its_inputs_changed() {
        let dir = workspace();
        let root = dir.path();
        let inputs = Inputs {
            roots: Roots::Named(&["licensing-sdk"]),
            dev: false,
            paths: &["cli"],
            commands: &[],
            env: &[],
        };
        let ran = ["sh", "-c", "mkdir -p target && echo ran >> target/ran"].map(String::from);
        let record = Options {
            record: true,
            always: false,
        };
        let go = |options| run(root, "unit", &inputs, options, &ran).unwrap();
        assert_eq!(go(Options::default()), Outcome::Passed);
        assert!(
            !root.join(".ci/checked/unit").exists(),
            "recorded without --record"
        );
        assert_eq!(go(record), Outcome::Passed);
        assert_eq!(lines(root), 2);
        let recorded = fs::read_to_string(root.join(".ci/checked/unit")).unwrap();
        assert_eq!(go(record), Outcome::Skipped);
        assert_eq!(lines(root), 2);
        write(root, "sdk/src/lib.rs", "pub fn changed() {}\n");
        assert_eq!(go(Options::default()), Outcome::Passed);
        assert_eq!(lines(root), 3);
        write(root, "cli/README.md", "a path input\n");
        assert_eq!(go(record), Outcome::Passed);
        let again = fs::read_to_string(root.join(".ci/checked/unit")).unwrap();
        assert_ne!(again, recorded);
        let always = Options {
            record: false,
            always: true,
        };
        assert_eq!(go(always), Outcome::Passed);
        assert_eq!(lines(root), 5);

        write(root, "sdk/src/lib.rs", "pub fn broken() {}\n");
        let fail = ["false".to_string()];
        assert_eq!(
            run(root, "unit", &inputs, record, &fail).unwrap(),
            Outcome::Failed
        );
        assert_eq!(
            fs::read_to_string(root.join(".ci/checked/unit")).unwrap(),
            again
        );
        let touch = ["sh", "-c", "echo more >> cli/README.md"].map(String::from);
        let error = run(root, "unit", &inputs, record, &touch).unwrap_err();
        assert!(error.to_string().contains("own inputs"), "{error}");
        assert_eq!(
            fs::read_to_string(root.join(".ci/checked/unit")).unwrap(),
            again
        );
    }

    /// `.ci/run` keys exactly the steps of [`STEPS`], and each on the script it runs: a
    /// step added there without its inputs here, or whose script is not one of them,
    /// would be skipped when that script changes.
    #[test]
    fn the_steps_of_ci_run_are_these() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let run = fs::read_to_string(root.join(".ci/run")).unwrap();
        let mut keyed = std::collections::BTreeMap::new();
        for line in run.lines().filter(|l| !l.trim_start().starts_with('#')) {
            let Some((_, call)) = line.split_once("ci_step ") else {
                continue;
            };
            let mut words = call.split_whitespace();
            let name = words.next().unwrap().to_string();
            let script = words.find(|w| w.starts_with(".ci/") && w.ends_with(".sh"));
            let script = script.unwrap_or_else(|| panic!("ci_step {name}: no .ci/*.sh script"));
            keyed.insert(name, script.to_string());
        }
        let names: Vec<_> = STEPS.iter().map(|s| s.name).collect();
        assert_eq!(keyed.keys().collect::<Vec<_>>(), {
            let mut sorted = names.clone();
            sorted.sort();
            sorted
        });
        for (name, script) in keyed {
            let paths = step(&name).unwrap().inputs.paths;
            let covered =
                |p: &&str| *p == "." || script == *p || script.starts_with(&format!("{p}/"));
            assert!(
                paths.iter().any(covered),
                "{name}: {script} is not an input"
            );
        }
    }

    #[test]
    fn an_unknown_step_is_named_with_the_steps() {
        let error = step("lint").err().unwrap().to_string();
        assert!(
            error.contains("\"lint\"") && error.contains("lints, quickstart"),
            "{error}"
        );
    }

    /// Every step's inputs are there in this workspace (a renamed folder would otherwise
    /// leave a step keyed on nothing), and the broadest hold what they must.
    #[test]
    fn each_step_reads_this_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for step in STEPS {
            step.inputs
                .check(root)
                .unwrap_or_else(|e| panic!("step {}: {e:#}", step.name));
        }
        let clients = step("clients").unwrap().inputs.collect(root).unwrap();
        for input in [
            "clients/java/pom.xml",
            "clients/go/go.mod",
            "clients/driver/src/main.rs",
            "sim/src/lib.rs",
            "spec/member.yaml",
            "$ go version",
        ] {
            assert!(
                clients.contains_key(input),
                "clients: {input} is not an input"
            );
        }
        let lints = step("lints").unwrap().inputs.collect(root).unwrap();
        assert!(lints.contains_key(".ci/run") && lints.contains_key("benches/bulk.rs"));
        assert!(!lints.keys().any(|k| k.starts_with(RECORDS)));
    }
}
