//! The corpus: the proof of spec-diff's rules, run as `cargo run -p licensing-spec-diff
//! --example corpus -- [--only IDS] [--stale]` (or `cargo xtask spec-diff-corpus`).
//!
//! Each file of `spec-diff/corpus/mutations/` is one small change to the current specs (a
//! list of JSON-pointer edits, `edit.rs`), with the verdicts spec-diff must give it
//! (`expect`), and optionally documents that exercise it: `old_samples` valid under the
//! current specs (read or sent by code generated from the mutated ones) and `new_samples`
//! valid under the mutated specs (read by code generated from the current ones).
//!
//! For every mutation, a consumer of each language written against the current specs is
//! built against the code generated from the mutated specs (`rust.rs`, `typescript.rs`,
//! `consumer.py`, `java.rs`, `go.rs`; set up by `prepare.rs` and `own.rs`, built and run by
//! `bench.rs`, `compile.rs` and `own.rs`):
//! the language's verdict is breaking exactly when that fails (does not compile or
//! type-check, or refuses a sample or a call at run time). The run fails when a compiler
//! and spec-diff disagree, or spec-diff and `expect` (`check.rs`).
//! `cargo test -p licensing-spec-diff` runs this example's tests: spec-diff against every
//! `expect`, against the compilers' verdicts recorded in `proven.json`, and the wire proof
//! (`wire.rs`), without the compilers.
//!
//! The tools are the pinned ones of `cargo xtask clients` (openapi-typescript and tsc,
//! openapi-python-client and mypy), installed from `clients/`'s lock files into
//! the target directory; openapi-generator's CLI at the version `clients/java/pom.xml`
//! pins and the client's Jackson, fetched by Maven into the target directory, with the
//! JDK's javac; oapi-codegen built from `clients/go/tools/go.mod`'s pin, with Go. Java's
//! and Go's proofs are recorded apart from the SDK consumers', each on its own inputs. The Rust consumer builds in a target directory of its own
//! (`<target>/spec-diff-corpus/rust/target`), against a copy of the SDK package whose
//! `spec/` is the mutated one.
//!
//! It needs this repository: the SDK it copies and generates, the specs it mutates, the
//! client generators' pins. That is why it is an example (built on the workspace's
//! unpublished packages, dev-dependencies) and not part of the published package.

mod bench;
mod check;
mod compile;
mod edit;
mod go;
mod java;
mod own;
mod prepare;
mod proven;
mod rust;
mod typescript;
mod wire;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;
use serde::Deserialize;
use serde_json::Value;

use edit::edit;
use licensing_clients::toolchain;
use licensing_spec_diff::load::{self, FILES, Side};
use licensing_spec_diff::rules::Verdict;

/// Prove spec-diff's rules: apply each mutation of spec-diff/corpus/mutations/ and build
/// Rust, TypeScript, Python, Java and Go consumers of the old specs against the new
/// generated code (minutes: one SDK build per mutation).
#[derive(Parser)]
#[command(name = "corpus")]
struct Cli {
    /// Only the mutations whose id contains one of these comma-separated texts.
    #[arg(long)]
    only: Option<String>,
    /// Only the mutations whose recorded proof (`spec-diff/corpus/proven.json`) no
    /// longer holds: what they read changed since it was recorded.
    #[arg(long)]
    stale: bool,
    /// Only these comma-separated consumers: `sdk` (Rust, TypeScript and Python, proved
    /// together), `java`, `go`.
    #[arg(long, default_value = "sdk,java,go")]
    consumers: String,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let consumers: Vec<&str> = cli.consumers.split(',').map(str::trim).collect();
    match run(&root(), cli.only.as_deref(), cli.stale, &consumers) {
        Ok(true) => ExitCode::SUCCESS,
        // The run already listed each disagreement.
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The repository root: the parent of this package, wherever cargo is invoked from.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the package lives one level below the workspace root")
        .to_path_buf()
}

/// The current specs, the side every mutation starts from.
fn current(root: &Path) -> Result<Side> {
    load::from_dir(&root.join("spec"), "spec/").map_err(|e| anyhow!("{e}"))
}

/// Where the mutations are, relative to the repository root.
pub const MUTATIONS: &str = "spec-diff/corpus/mutations";

/// The Python consumer's writer and runner, relative to the repository root.
pub const PYTHON_CONSUMER: &str = "spec-diff/corpus/consumer.py";

/// One mutation file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mutation {
    #[serde(skip)]
    pub id: String,
    pub title: String,
    pub edits: Vec<Edit>,
    /// What spec-diff must say, consumer by consumer (the worst over its changes).
    pub expect: std::collections::BTreeMap<String, Verdict>,
    /// How many changes spec-diff must report (a rename is one).
    #[serde(default)]
    pub changes: Option<usize>,
    #[serde(default)]
    pub old_samples: Vec<Sample>,
    #[serde(default)]
    pub new_samples: Vec<Sample>,
    /// Samples only the wire proof reads (`wire.rs`).
    #[serde(default)]
    pub wire: wire::Samples,
}

/// A JSON-pointer edit of one spec (RFC 6902's add, remove, replace, move, plus `ref`,
/// which repoints every `$ref` equal to `from` to `to`).
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub spec: String,
    pub op: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default)]
    pub value: Option<Value>,
}

#[derive(Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    pub service: String,
    pub schema: String,
    pub value: Value,
}

/// Every mutation, by file name order.
pub fn mutations(root: &Path) -> Result<Vec<Mutation>> {
    let dir = root.join(MUTATIONS);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let text = fs::read_to_string(path)?;
            let mut m: Mutation = serde_norway::from_str(&text)
                .with_context(|| format!("{}: not a mutation", path.display()))?;
            m.id = path
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            Ok(m)
        })
        .collect()
}

/// The spec texts with the mutation's edits applied.
pub fn apply(base: &Side, m: &Mutation) -> Result<Vec<(&'static str, String, String)>> {
    let mut out = Vec::new();
    for spec in &base.specs {
        let edits: Vec<&Edit> = m.edits.iter().filter(|e| e.spec == spec.service).collect();
        if edits.is_empty() {
            out.push((spec.service, spec.file.clone(), spec.text.clone()));
            continue;
        }
        let mut doc = licensing_spec::raw(&spec.text).map_err(|e| anyhow!("{}: {e}", spec.file))?;
        for e in edits {
            edit(&mut doc, e).with_context(|| format!("{}: {} {}", m.id, e.op, e.path))?;
        }
        let text = licensing_spec::to_yaml(&doc).map_err(|e| anyhow!("{}: {e}", spec.file))?;
        out.push((spec.service, format!("{} ({})", spec.file, m.id), text));
    }
    for e in &m.edits {
        if !FILES.iter().any(|(s, _)| *s == e.spec) {
            bail!("{}: no spec `{}`", m.id, e.spec);
        }
    }
    Ok(out)
}

/// The examples of the current specs' component schemas, as samples.
pub fn example_samples(base: &Side) -> Vec<Sample> {
    let mut out = Vec::new();
    for spec in &base.specs {
        for (name, s) in spec.api.components.iter().flat_map(|c| c.schemas.iter()) {
            if let openapiv3::ReferenceOr::Item(s) = s
                && let Some(example) = &s.schema_data.example
            {
                out.push(Sample {
                    service: spec.service.to_string(),
                    schema: name.clone(),
                    value: example.clone(),
                });
            }
        }
    }
    out
}

/// The command: every mutation (or those whose id contains `only`; with `stale`, those
/// whose recorded proof no longer holds), through the chosen `consumers`; Ok(false) when a
/// compiler and spec-diff disagree anywhere. The compilers' verdicts are recorded in
/// `proven.json`, each consumer's on its own inputs (`proven::OWN`) apart from the SDK's.
pub fn run(root: &Path, only: Option<&str>, stale: bool, consumers: &[&str]) -> Result<bool> {
    let started = Instant::now();
    let base = current(root)?;
    let all = mutations(root)?;
    let inputs = proven::inputs_digest(root)?;
    let mut record = proven::Proven::load(root)?;
    let sdk = consumers.contains(&"sdk");
    let own: Vec<(&str, String)> = proven::OWN
        .iter()
        .filter(|(c, _)| consumers.contains(c))
        .map(|(c, _)| Ok((*c, proven::own_digest(root, c)?)))
        .collect::<Result<_>>()?;
    for c in consumers {
        if *c != "sdk" && !own.iter().any(|(o, _)| o == c) {
            bail!("no consumer `{c}` (sdk, java, go)");
        }
    }
    // What each mutation needs proved: the SDK's consumers, and which of the others.
    let needs = |m: &Mutation| -> (bool, Vec<usize>) {
        let sdk_stale = sdk && (!stale || record.current(&inputs, m).is_none());
        let own_stale = own
            .iter()
            .enumerate()
            .filter(|(_, (c, d))| !stale || record.own_current(c, d, m).is_none())
            .map(|(i, _)| i)
            .collect();
        (sdk_stale, own_stale)
    };
    let chosen: Vec<(&Mutation, (bool, Vec<usize>))> = all
        .iter()
        .filter(|m| only.is_none_or(|o| o.split(',').any(|o| m.id.contains(o))))
        .map(|m| (m, needs(m)))
        .filter(|(_, (s, o))| *s || !o.is_empty())
        .collect();
    if chosen.is_empty() {
        if stale {
            eprintln!(
                "spec-diff corpus: every mutation's recorded proof holds ({}); \
                 `cargo test -p licensing-spec-diff` holds the rules to it",
                proven::FILE
            );
            return Ok(true);
        }
        bail!("no mutation matches");
    }
    let bench = if chosen.iter().any(|(_, (s, _))| *s) {
        if record.inputs != inputs {
            // Proofs of other inputs prove nothing now.
            record.mutations.clear();
            record.inputs = inputs.clone();
        }
        Some(prepare::prepare(root, &base)?)
    } else {
        None
    };
    let mut tools = Vec::new();
    for (i, (c, _)) in own.iter().enumerate() {
        if chosen.iter().any(|(_, (_, o))| o.contains(&i)) {
            tools.push((i, own::Own::prepare(root, &base, c)?));
        }
    }
    let mut problems = Vec::new();
    let mut table = String::from(
        "| mutation | wire: old clients | wire: new clients | rust | typescript | python | java | go | schemas | semver-checks |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (m, (sdk_stale, own_stale)) in &chosen {
        let t = toolchain::step(&format!("{}: {}", m.id, m.title));
        let (changes, worst) = check::judge(&base, m)?;
        problems.extend(check::check_expect(m, &changes, &worst));
        let proof = match (&bench, sdk_stale) {
            (Some(bench), true) => Some(compile::compile(bench, &base, m)?),
            _ => record.current(&inputs, m).cloned(),
        };
        for (i, tool) in &tools {
            if own_stale.contains(i) {
                let t = Instant::now();
                let single = tool.prove(&base, m)?;
                eprintln!("    {} {:.0} s", tool.name(), t.elapsed().as_secs_f64());
                record.record_own(tool.name(), &own[*i].1, m, single);
            }
        }
        let singles: Vec<(&str, Option<&proven::Single>)> = own
            .iter()
            .map(|(c, d)| (*c, record.own_current(c, d, m)))
            .collect();
        let wired = wire::prove(&base, m)?;
        let mut disagree = proof
            .as_ref()
            .map(|p| check::check_proof(m, &worst, p))
            .unwrap_or_default();
        disagree.extend(check::check_own(m, &worst, &singles));
        disagree.extend(wire::check(m, &worst, &wired));
        table.push_str(&compile::row(
            m,
            &worst,
            proof.as_ref(),
            &singles,
            &wired,
            &disagree,
        ));
        problems.extend(disagree);
        if let (Some(p), true) = (proof, *sdk_stale) {
            record.mutations.insert(m.id.clone(), p);
        }
        toolchain::done(t);
    }
    record.save(root)?;
    let target = toolchain::target_dir(root)?.join("spec-diff-corpus");
    fs::create_dir_all(&target)?;
    let report = target.join("report.md");
    fs::write(&report, &table)?;
    eprintln!("\n{table}");
    eprintln!(
        "spec-diff corpus: {} mutation(s), {} problem(s), {:.0} s (table in {}; proofs recorded in {})",
        chosen.len(),
        problems.len(),
        started.elapsed().as_secs_f64(),
        report.display(),
        proven::FILE
    );
    for p in &problems {
        eprintln!("DISAGREE {p}");
    }
    let failed = usize::from(!problems.is_empty());
    println!(
        "{} passed, {failed} failed",
        chosen.len() - problems.len().min(chosen.len())
    );
    Ok(problems.is_empty())
}

#[cfg(test)]
mod tests;
