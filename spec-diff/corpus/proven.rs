//! `spec-diff/corpus/proven.json`: what the compilers said of each mutation when the corpus
//! last ran, with digests of what they read.
//!
//! A compiler's verdict on a mutation depends on the specs, the generator, the consumer
//! programs, the pinned client generators and the mutation's edits and samples, and on
//! nothing in spec-diff's rules. So while those digests match, the recorded verdicts are
//! the compilers' verdicts, and `cargo test -p licensing-spec-diff` holds the rules to them
//! without building anything; a mutation whose digest differs is stale, and `cargo xtask
//! spec-diff-corpus --stale` (CI's step) proves it again and records it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Mutation;
use licensing_spec_diff::rules::Verdict;

/// The record, relative to the repository root.
pub const FILE: &str = "spec-diff/corpus/proven.json";

/// What every proof reads besides its mutation, relative to the repository root. The SDK's
/// hand-written layer (`src/`) is not among them: the consumers exercise the generated
/// surface, and `.ci/semver.sh` checks the whole API against the last release. Nor are the
/// wire proof (`wire.rs`, run by every `cargo test`, never recorded) and the tests.
const INPUTS: [&str; 18] = [
    "spec",
    "spec-model/src",
    "spec-model/Cargo.toml",
    "codegen/src",
    "codegen/Cargo.toml",
    // The corpus's code that applies the edits and builds and runs the consumers (not
    // `check.rs`: the rules' side), and the consumers' writers.
    "spec-diff/corpus/main.rs",
    "spec-diff/corpus/edit.rs",
    "spec-diff/corpus/prepare.rs",
    "spec-diff/corpus/bench.rs",
    "spec-diff/corpus/compile.rs",
    "spec-diff/corpus/rust.rs",
    "spec-diff/corpus/typescript.rs",
    "spec-diff/corpus/consumer.py",
    // The pinned client generators and what openapi-python-client is run with.
    "clients/typescript/package.json",
    "clients/typescript/package-lock.json",
    "clients/python/requirements.txt",
    "clients/python/config.yaml",
    "clients/python/templates",
];

/// What the Java and Go proofs read besides their mutation and their consumer's writer
/// (`java.rs`, `go.rs`): each is stale on its own inputs, so a change to one consumer
/// proves that one again, not the SDK's.
const SHARED: [&str; 3] = [
    "spec",
    "spec-diff/corpus/main.rs",
    "spec-diff/corpus/edit.rs",
];

/// Each later consumer's own inputs, beside `SHARED`.
pub const OWN: [(&str, &[&str]); 2] = [
    (
        "java",
        &["spec-diff/corpus/java.rs", "clients/java/pom.xml"],
    ),
    (
        "go",
        &[
            "spec-diff/corpus/go.rs",
            "clients/go/go.mod",
            "clients/go/go.sum",
            "clients/go/tools/go.mod",
            "clients/go/tools/go.sum",
            "clients/go/order/oapi-codegen.yaml",
            "clients/go/member/oapi-codegen.yaml",
        ],
    ),
];

#[derive(Serialize, Deserialize, Default)]
pub struct Proven {
    #[serde(rename = "$comment", default)]
    pub comment: String,
    /// The digest of `INPUTS` when the compilers ran.
    pub inputs: String,
    pub mutations: BTreeMap<String, Proof>,
    /// The consumers proved on their own inputs (`OWN`), by name; absent from records
    /// written before they were.
    #[serde(default)]
    pub own: BTreeMap<String, Group>,
}

/// One consumer's proofs, recorded apart from the others'.
#[derive(Serialize, Deserialize, Default, Clone)]
pub struct Group {
    /// The digest of `SHARED` and the consumer's own inputs when its compiler ran.
    pub inputs: String,
    pub mutations: BTreeMap<String, Single>,
}

/// One consumer's verdict on one mutation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Single {
    pub edits: String,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// One mutation's verdicts, as the compilers gave them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// The digest of the mutation's edits and samples (not its title or expectations).
    pub edits: String,
    pub rust: Verdict,
    pub typescript: Verdict,
    pub python: Verdict,
    /// cargo-semver-checks between the SDK generated from the current specs and from the
    /// mutated ones; absent when it was not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semver: Option<Verdict>,
    /// The first lines of what each failing tool said.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub why: BTreeMap<String, String>,
}

impl Proven {
    pub fn load(root: &Path) -> Result<Proven> {
        let path = root.join(FILE);
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{}: not a proof record", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Proven::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    pub fn save(&mut self, root: &Path) -> Result<()> {
        self.comment = "Written by `cargo xtask spec-diff-corpus`: the compilers' verdicts on \
                        each mutation and digests of what they read; do not edit."
            .into();
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        let path = root.join(FILE);
        fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// The recorded verdict of `consumer` (one of `OWN`) on `m`, if it still holds for
    /// these inputs (its `own_digest`).
    pub fn own_current(&self, consumer: &str, inputs: &str, m: &Mutation) -> Option<&Single> {
        let group = self.own.get(consumer).filter(|g| g.inputs == inputs)?;
        group
            .mutations
            .get(&m.id)
            .filter(|p| p.edits == edits_digest(m))
    }

    /// Records `consumer`'s verdict on `m`, read with `inputs`: proofs of other inputs
    /// prove nothing now.
    pub fn record_own(&mut self, consumer: &str, inputs: &str, m: &Mutation, single: Single) {
        let group = self.own.entry(consumer.to_string()).or_default();
        if group.inputs != inputs {
            group.mutations.clear();
            group.inputs = inputs.to_string();
        }
        group.mutations.insert(m.id.clone(), single);
    }

    /// The recorded proof of `m`, if it still holds for these inputs.
    pub fn current(&self, inputs: &str, m: &Mutation) -> Option<&Proof> {
        if self.inputs != inputs {
            return None;
        }
        self.mutations
            .get(&m.id)
            .filter(|p| p.edits == edits_digest(m))
    }
}

/// The digest of every file under `INPUTS` (path and content, in path order).
pub fn inputs_digest(root: &Path) -> Result<String> {
    digest(root, INPUTS.iter())
}

/// The digest of what `consumer`'s proofs read (`SHARED` and its `OWN`).
pub fn own_digest(root: &Path, consumer: &str) -> Result<String> {
    let own = OWN
        .iter()
        .find(|(c, _)| *c == consumer)
        .map(|(_, files)| *files)
        .unwrap_or_default();
    digest(root, SHARED.iter().chain(own))
}

fn digest<'a>(root: &Path, inputs: impl Iterator<Item = &'a &'a str>) -> Result<String> {
    let mut files = Vec::new();
    for input in inputs {
        collect(&root.join(input), &mut files)?;
    }
    files.sort();
    let mut hash = Sha256::new();
    for file in files {
        let relative = file.strip_prefix(root).unwrap_or(&file);
        hash.update(relative.to_string_lossy().as_bytes());
        hash.update([0]);
        let bytes = fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(hex(&hash.finalize()))
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    for entry in fs::read_dir(path).with_context(|| format!("cannot list {}", path.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        // What tools leave beside their inputs.
        if ["node_modules", "__pycache__", "target"]
            .iter()
            .any(|skip| name == *skip)
        {
            continue;
        }
        collect(&entry.path(), out)?;
    }
    Ok(())
}

/// The digest of what a mutation feeds the compilers.
pub fn edits_digest(m: &Mutation) -> String {
    let value = serde_json::json!({
        "edits": m.edits,
        "old_samples": m.old_samples,
        "new_samples": m.new_samples,
    });
    hex(&Sha256::digest(value.to_string().as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
