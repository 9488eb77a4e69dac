//! `cargo xtask spec-diff-corpus`: the proof of spec-diff's rules.
//!
//! Each file of `xtask/spec-diff/mutations/` is one small change to the current specs (a
//! list of JSON-pointer edits), with the verdicts spec-diff must give it (`expect`), and
//! optionally documents that exercise it: `old_samples` valid under the current specs
//! (read or sent by code generated from the mutated ones) and `new_samples` valid under
//! the mutated specs (read by code generated from the current ones).
//!
//! For every mutation, a consumer of each language written against the current specs is
//! built against the code generated from the mutated specs (`rust.rs`, `typescript.rs`,
//! `xtask/spec-diff/consumer.py`): the language's verdict is breaking exactly when that
//! fails (does not compile or type-check, or refuses a sample or a call at run time). The
//! run fails when a compiler and spec-diff disagree, or spec-diff and `expect`.
//! `cargo test -p xtask` checks spec-diff against every `expect` without the compilers.
//!
//! The tools are the pinned ones of `cargo xtask clients` (openapi-typescript and tsc,
//! openapi-python-client and mypy), installed from `clients/`'s lock files into
//! the target directory. The Rust consumer builds in a target directory of its own
//! (`<target>/spec-diff-corpus/rust/target`), against a copy of the SDK package whose
//! `spec/` is the mutated one.

pub mod proven;
mod rust;
mod typescript;
pub mod wire;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde_json::Value;

use super::load::{self, FILES, Side};
use super::rules::{CONSUMERS, Verdict, Verdicts};
use crate::toolchain;

/// Where the mutations are, relative to the repository root.
pub const MUTATIONS: &str = "xtask/spec-diff/mutations";

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

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn split(pointer: &str) -> Result<(String, String)> {
    let i = pointer
        .rfind('/')
        .ok_or_else(|| anyhow!("`{pointer}` is not a JSON pointer"))?;
    Ok((pointer[..i].to_string(), unescape(&pointer[i + 1..])))
}

fn take(doc: &mut Value, pointer: &str) -> Result<Value> {
    let (parent, key) = split(pointer)?;
    let parent = doc
        .pointer_mut(&parent)
        .ok_or_else(|| anyhow!("no `{parent}`"))?;
    match parent {
        Value::Object(m) => m.remove(&key).ok_or_else(|| anyhow!("no `{pointer}`")),
        Value::Array(a) => {
            let i: usize = key.parse()?;
            if i >= a.len() {
                bail!("no `{pointer}`");
            }
            Ok(a.remove(i))
        }
        _ => bail!("`{pointer}`: parent is not a container"),
    }
}

fn put(doc: &mut Value, pointer: &str, value: Value) -> Result<()> {
    let (parent, key) = split(pointer)?;
    let parent = doc
        .pointer_mut(&parent)
        .ok_or_else(|| anyhow!("no `{parent}`"))?;
    match parent {
        Value::Object(m) => {
            m.insert(key, value);
        }
        Value::Array(a) if key == "-" => a.push(value),
        Value::Array(a) => {
            let i: usize = key.parse()?;
            if i > a.len() {
                bail!("`{pointer}`: index past the end");
            }
            a.insert(i, value);
        }
        _ => bail!("`{pointer}`: parent is not a container"),
    }
    Ok(())
}

fn repoint(v: &mut Value, from: &str, to: &str) -> usize {
    match v {
        Value::Object(m) => {
            let mut n = 0;
            for (k, v) in m.iter_mut() {
                if k == "$ref" && v.as_str() == Some(from) {
                    *v = Value::from(to);
                    n += 1;
                } else {
                    n += repoint(v, from, to);
                }
            }
            n
        }
        Value::Array(a) => a.iter_mut().map(|v| repoint(v, from, to)).sum(),
        _ => 0,
    }
}

fn edit(doc: &mut Value, e: &Edit) -> Result<()> {
    let value = || e.value.clone().ok_or_else(|| anyhow!("needs a value"));
    match e.op.as_str() {
        "add" => put(doc, &e.path, value()?),
        "remove" => take(doc, &e.path).map(drop),
        "replace" => {
            let target = doc
                .pointer_mut(&e.path)
                .ok_or_else(|| anyhow!("no `{}`", e.path))?;
            *target = value()?;
            Ok(())
        }
        "move" => {
            let from = e.from.as_deref().ok_or_else(|| anyhow!("needs from"))?;
            let v = take(doc, from)?;
            put(doc, &e.path, v)
        }
        "ref" => {
            let (from, to) = (
                e.from.as_deref().ok_or_else(|| anyhow!("needs from"))?,
                e.to.as_deref().ok_or_else(|| anyhow!("needs to"))?,
            );
            if repoint(doc, from, to) == 0 {
                bail!("no `$ref: {from}`");
            }
            Ok(())
        }
        other => bail!("unknown op `{other}`"),
    }
}

/// What spec-diff says of a mutation: the changes, and the worst verdict per consumer.
pub fn judge(base: &Side, m: &Mutation) -> Result<(Vec<super::Change>, Verdicts)> {
    let head = load::parse(&m.id, apply(base, m)?).map_err(|e| anyhow!("{e}"))?;
    let changes = super::changes(base, &head);
    let worst = changes
        .iter()
        .fold(Verdicts::NONE, |acc, c| acc.max(c.verdicts));
    Ok((changes, worst))
}

/// spec-diff's verdicts against the mutation's `expect`; the differences, one a line.
pub fn check_expect(m: &Mutation, changes: &[super::Change], worst: &Verdicts) -> Vec<String> {
    let mut problems = Vec::new();
    if changes.is_empty() {
        problems.push(format!("{}: spec-diff reports no change", m.id));
    }
    if let Some(n) = m.changes
        && n != changes.len()
    {
        let list: Vec<&str> = changes.iter().map(|c| c.summary.as_str()).collect();
        problems.push(format!(
            "{}: {} change(s) reported, {n} expected: {list:?}",
            m.id,
            changes.len()
        ));
    }
    for consumer in CONSUMERS {
        let got = worst.get(consumer).expect("known consumer");
        match m.expect.get(consumer) {
            Some(want) if *want == got => {}
            Some(want) => problems.push(format!(
                "{}: spec-diff says {consumer} {got:?}, the mutation expects {want:?}",
                m.id
            )),
            None => problems.push(format!("{}: no expected verdict for {consumer}", m.id)),
        }
    }
    problems
}

/// The examples of the current specs' component schemas, as samples.
fn example_samples(base: &Side) -> Vec<Sample> {
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

/// Whether Python has a model or literal enum for the schema (plain strings and lists
/// have none: nothing to decode them with).
fn python_type(base: &Side, s: &Sample) -> bool {
    use openapiv3::{SchemaKind, Type};
    let Some(spec) = base.specs.iter().find(|x| x.service == s.service) else {
        return true;
    };
    match spec
        .api
        .components
        .as_ref()
        .and_then(|c| c.schemas.get(&s.schema))
    {
        Some(openapiv3::ReferenceOr::Item(x)) => match &x.schema_kind {
            SchemaKind::Type(Type::Object(_)) => true,
            SchemaKind::Type(Type::String(t)) => !t.enumeration.is_empty(),
            SchemaKind::Type(Type::Integer(t)) => !t.enumeration.is_empty(),
            _ => false,
        },
        // A schema the mutation added: the sample's author meant it.
        _ => true,
    }
}

struct Outcome {
    broke: bool,
    why: String,
}

fn outcome(result: std::io::Result<std::process::Output>, what: &str) -> Result<Outcome> {
    let out = result.with_context(|| format!("cannot run {what}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let why = text
        .lines()
        .filter(|l| l.contains("error") || l.starts_with("REFUSED") || l.contains("Error"))
        .take(3)
        .collect::<Vec<_>>()
        .join(" / ");
    Ok(Outcome {
        broke: !out.status.success(),
        why: if why.is_empty() {
            text.lines().rev().take(2).collect::<Vec<_>>().join(" / ")
        } else {
            why
        },
    })
}

/// The corpus's working directories and tools.
struct Bench {
    root: PathBuf,
    dir: PathBuf,
    node_bin: PathBuf,
    py_bin: PathBuf,
    /// The Rust consumer built against the current SDK: reads `new_samples`.
    old_rust: PathBuf,
    /// cargo-semver-checks (`cargo` to run it with), and the current SDK's rustdoc JSON.
    semver: Option<PathBuf>,
}

impl Bench {
    fn rust_dir(&self) -> PathBuf {
        self.dir.join("rust")
    }

    /// Writes the SDK package with `texts` as its `spec/` (the package's own files from the
    /// repository; its manifest without the workspace's sections), and builds the consumer.
    fn build_rust(&self, texts: &[(&'static str, String, String)]) -> Result<Outcome> {
        let sdk = self.rust_dir().join("sdk");
        fs::create_dir_all(sdk.join("spec"))?;
        for ((_, file), (_, _, text)) in FILES.iter().zip(texts) {
            write_if_changed(&sdk.join("spec").join(file), text)?;
        }
        let t = Instant::now();
        let result = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--offline", "--manifest-path"])
            .arg(self.rust_dir().join("consumer/Cargo.toml"))
            .env("CARGO_TARGET_DIR", self.rust_dir().join("target"))
            // One build per mutation of a crate that changes every time: incremental
            // state would only pile up on disk.
            .env("CARGO_INCREMENTAL", "0")
            .output();
        let o = outcome(result, "cargo build (Rust consumer)")?;
        eprintln!("    rust build {:.0} s", t.elapsed().as_secs_f64());
        Ok(o)
    }

    /// rustdoc's JSON of the SDK copy as its `spec/` now stands (after `build_rust`).
    fn rustdoc(&self, name: &str) -> Result<PathBuf> {
        let out = Command::new(env!("CARGO"))
            .args([
                "rustdoc",
                "--quiet",
                "--offline",
                "--lib",
                "-p",
                "licensing-sdk",
            ])
            .arg("--manifest-path")
            .arg(self.rust_dir().join("consumer/Cargo.toml"))
            .args(["--", "-Zunstable-options", "--output-format", "json"])
            .env("CARGO_TARGET_DIR", self.rust_dir().join("target"))
            .env("CARGO_INCREMENTAL", "0")
            // rustdoc's JSON output is unstable; cargo-semver-checks reads it the same way.
            .env("RUSTC_BOOTSTRAP", "1")
            .output()
            .context("cannot run cargo rustdoc")?;
        if !out.status.success() {
            bail!(
                "cargo rustdoc of the SDK failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let json = self.rust_dir().join(format!("{name}.json"));
        fs::copy(self.rust_dir().join("target/doc/licensing_sdk.json"), &json)?;
        Ok(json)
    }

    /// cargo-semver-checks between the current SDK and the SDK as `build_rust` left it, as
    /// a minor release (0.x: a breaking change needs more).
    fn semver(&self) -> Result<Option<Outcome>> {
        let Some(tool) = &self.semver else {
            return Ok(None);
        };
        let current = match self.rustdoc("mutated") {
            Ok(json) => json,
            // The generated SDK itself does not build: nothing to compare.
            Err(e) => {
                eprintln!("    cargo-semver-checks not run: {e:#}");
                return Ok(None);
            }
        };
        outcome(
            Command::new(tool)
                .args(["semver-checks", "check-release", "--baseline-rustdoc"])
                .arg(self.rust_dir().join("current.json"))
                .arg("--current-rustdoc")
                .arg(current)
                .args(["--release-type", "minor"])
                .output(),
            "cargo semver-checks",
        )
        .map(Some)
    }

    fn rust_binary(&self) -> PathBuf {
        self.rust_dir().join("target/debug/spec-diff-consumer")
    }

    fn typescript(&self, texts: &[(&'static str, String, String)]) -> Result<Outcome> {
        let ts = self.dir.join("typescript");
        for ((service, file), (_, _, text)) in FILES.iter().zip(texts) {
            let spec = ts.join("new").join(file);
            fs::create_dir_all(spec.parent().expect("parent"))?;
            fs::write(&spec, text)?;
            let out = Command::new(self.node_bin.join("openapi-typescript"))
                .arg(&spec)
                .arg("--output")
                .arg(ts.join("new").join(format!("{service}.ts")))
                .args(["--default-non-nullable", "false"])
                .output()?;
            if !out.status.success() {
                return Ok(Outcome {
                    broke: true,
                    why: format!(
                        "openapi-typescript: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    ),
                });
            }
        }
        outcome(
            Command::new(self.node_bin.join("tsc"))
                .args(["--project", "."])
                .current_dir(&ts)
                .output(),
            "tsc",
        )
    }

    fn python_generate(&self, texts: &[(&'static str, String, String)], into: &Path) -> Result<()> {
        fs::create_dir_all(into)?;
        let shipped = self.root.join("clients/python");
        for ((service, file), (_, _, text)) in FILES.iter().zip(texts) {
            let spec = into.join(file);
            fs::write(&spec, text)?;
            let out = Command::new(self.py_bin.join("openapi-python-client"))
                .args(["generate", "--path"])
                .arg(&spec)
                .args(["--meta", "none", "--config"])
                .arg(shipped.join("config.yaml"))
                .arg("--custom-template-path")
                .arg(shipped.join("templates"))
                .arg("--output-path")
                .arg(into.join(format!("licensing_{service}")))
                .arg("--overwrite")
                .env("PATH", toolchain::path_with(&self.py_bin)?)
                .output()?;
            if !out.status.success() {
                bail!(
                    "openapi-python-client failed on {}: {}",
                    spec.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        Ok(())
    }

    fn python_parse(&self, packages: &Path, samples: &[Sample]) -> Result<Outcome> {
        let file = packages.join("samples.json");
        fs::write(&file, serde_json::to_string(samples)?)?;
        outcome(
            Command::new(self.py_bin.join("python"))
                .arg(self.root.join("xtask/spec-diff/consumer.py"))
                .arg("parse")
                .arg(&file)
                .env("PYTHONPATH", packages)
                .output(),
            "consumer.py parse",
        )
    }

    fn python(
        &self,
        texts: &[(&'static str, String, String)],
        old: &[Sample],
        new: &[Sample],
    ) -> Result<Outcome> {
        let py = self.dir.join("python");
        let new_dir = py.join("new");
        let _ = fs::remove_dir_all(&new_dir);
        self.python_generate(texts, &new_dir)?;
        let mypy = outcome(
            Command::new(self.py_bin.join("python"))
                .args(["-m", "mypy", "--follow-imports=silent", "--no-incremental"])
                .arg(py.join("consumer.py"))
                .env("MYPYPATH", &new_dir)
                .current_dir(&py)
                .output(),
            "mypy",
        )?;
        if mypy.broke {
            return Ok(mypy);
        }
        let read_old = self.python_parse(&new_dir, old)?;
        if read_old.broke {
            return Ok(read_old);
        }
        self.python_parse(&py.join("old"), new)
    }
}

fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The SDK's manifest for a package of its own: the `[package]`, dependency and feature
/// sections, workspace-inherited keys spelled out, the generator's path made absolute.
fn sdk_manifest(root: &Path) -> Result<String> {
    let text = fs::read_to_string(root.join("Cargo.toml"))?;
    let mut inherited = std::collections::BTreeMap::new();
    let mut section = String::new();
    for line in text.lines() {
        if line.starts_with('[') {
            section = line.trim_matches(['[', ']']).to_string();
        } else if section == "workspace.package"
            && let Some((k, v)) = line.split_once(" = ")
        {
            inherited.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    let keep = ["package", "dependencies", "features", "build-dependencies"];
    let mut out = String::new();
    let mut keeping = false;
    for line in text.lines() {
        if line.starts_with('[') {
            keeping = keep.contains(&line.trim_matches(['[', ']']));
        }
        if !keeping {
            continue;
        }
        let mut line = line.to_string();
        if let Some((k, _)) = line.split_once(".workspace = true")
            && let Some(v) = inherited.get(k.trim())
        {
            line = format!("{} = {v}", k.trim());
        }
        let codegen = root.join("codegen");
        line = line.replace(
            "path = \"codegen\"",
            &format!("path = {:?}", codegen.display().to_string()),
        );
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            let text = fs::read(entry.path())?;
            if fs::read(&target).ok().as_deref() != Some(text.as_slice()) {
                fs::write(&target, text)?;
            }
        }
    }
    Ok(())
}

fn prepare(root: &Path, base: &Side) -> Result<Bench> {
    let t = toolchain::step("spec-diff corpus: tools and the consumers of the current specs");
    let target = toolchain::target_dir(root)?;
    let dir = target.join("spec-diff-corpus");
    let ts_tools = target.join("clients").join("typescript");
    toolchain::npm_ci(&root.join("clients/typescript"), &ts_tools)?;
    let py_bin = toolchain::venv(
        &root.join("clients/python/requirements.txt"),
        &target.join("clients").join("venv"),
    )?;
    let services: Vec<licensing_codegen::Service> = base
        .specs
        .iter()
        .map(|s| licensing_codegen::Service {
            name: s.service,
            file: &s.file,
            text: &s.text,
        })
        .collect();
    let files = licensing_codegen::generate(&services).map_err(|e| anyhow!("{e}"))?;

    // Rust: the SDK package (its spec/ written per mutation) and the consumer.
    let rust_dir = dir.join("rust");
    let sdk = rust_dir.join("sdk");
    fs::create_dir_all(&sdk)?;
    write_if_changed(&sdk.join("Cargo.toml"), &sdk_manifest(root)?)?;
    copy_dir(&root.join("src"), &sdk.join("src"))?;
    for file in ["build.rs", "README.md"] {
        write_if_changed(&sdk.join(file), &fs::read_to_string(root.join(file))?)?;
    }
    let consumer = rust_dir.join("consumer");
    fs::create_dir_all(consumer.join("src"))?;
    write_if_changed(
        &consumer.join("Cargo.toml"),
        "[package]\nname = \"spec-diff-consumer\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n# Without rustls: the calls go to a closed plain-HTTP port.\n\
         licensing-sdk = { path = \"../sdk\", default-features = false }\nserde_json = \"1\"\n\
         chrono = { version = \"0.4\", default-features = false, features = [\"serde\", \"std\"] }\n\
         tokio = { version = \"1\", features = [\"rt\"] }\n\n[workspace]\n",
    )?;
    // The workspace's lock: the same dependency versions as the SDK's own build.
    write_if_changed(
        &consumer.join("Cargo.lock"),
        &fs::read_to_string(root.join("Cargo.lock"))?,
    )?;
    let apis: Vec<(&str, &openapiv3::OpenAPI)> =
        base.specs.iter().map(|s| (s.service, &s.api)).collect();
    write_if_changed(
        &consumer.join("src/main.rs"),
        &rust::consumer(&files, &apis)?,
    )?;

    // TypeScript: the old types and the consumers.
    let ts = dir.join("typescript");
    fs::create_dir_all(ts.join("old"))?;
    fs::create_dir_all(ts.join("new"))?;
    let node_bin = ts_tools.join("node_modules").join(".bin");
    for spec in &base.specs {
        let file = ts.join("old").join(format!("{}.yaml", spec.service));
        fs::write(&file, &spec.text)?;
        toolchain::run(
            Command::new(node_bin.join("openapi-typescript"))
                .arg(&file)
                .arg("--output")
                .arg(ts.join("old").join(format!("{}.ts", spec.service)))
                .args(["--default-non-nullable", "false"]),
        )?;
        fs::write(
            ts.join(format!("consumer_{}.ts", spec.service)),
            typescript::consumer(spec.service, &spec.api),
        )?;
    }
    fs::write(
        ts.join("tsconfig.json"),
        r#"{"compilerOptions": {"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
  "strict": true, "noEmit": true, "skipLibCheck": true, "types": []},
 "include": ["consumer_*.ts"]}
"#,
    )?;

    // Python: the old packages and the consumer written from them.
    let py = dir.join("python");
    let old = py.join("old");
    let _ = fs::remove_dir_all(&old);
    let texts: Vec<(&'static str, String, String)> = base
        .specs
        .iter()
        .map(|s| (s.service, s.file.clone(), s.text.clone()))
        .collect();
    let bench = Bench {
        root: root.to_path_buf(),
        dir: dir.clone(),
        node_bin,
        py_bin: py_bin.clone(),
        old_rust: dir.join("rust").join("consumer-current"),
        semver: semver_checks(),
    };
    bench.python_generate(&texts, &old)?;
    let usage: serde_json::Map<String, Value> = base
        .specs
        .iter()
        .map(|s| {
            let u = typescript::usage(&s.api)
                .into_iter()
                .map(|(name, (req, rep))| (name, serde_json::json!([req, rep])))
                .collect::<serde_json::Map<_, _>>();
            (s.service.to_string(), Value::Object(u))
        })
        .collect();
    fs::write(py.join("usage.json"), Value::Object(usage).to_string())?;
    toolchain::run(
        Command::new(py_bin.join("python"))
            .arg(root.join("xtask/spec-diff/consumer.py"))
            .arg("generate")
            .arg(py.join("consumer.py"))
            .arg(py.join("usage.json"))
            .env("PYTHONPATH", &old),
    )?;

    // Each consumer must pass against the current specs themselves, or it proves nothing.
    let samples = example_samples(base);
    let rust = bench.build_rust(&texts)?;
    if rust.broke {
        bail!(
            "the Rust consumer does not build against the current SDK: {}",
            rust.why
        );
    }
    fs::copy(bench.rust_binary(), &bench.old_rust)?;
    if bench.semver.is_some() {
        let current = bench.rustdoc("current")?;
        // Against itself it must find nothing, or its verdicts prove nothing.
        if let Some(o) = bench.semver()?
            && o.broke
        {
            bail!(
                "cargo semver-checks finds the current SDK breaks itself: {}",
                o.why
            );
        }
        eprintln!(
            "    cargo-semver-checks: rustdoc JSON in {}",
            current.display()
        );
    } else {
        eprintln!("    cargo-semver-checks not found: its cross-check is skipped");
    }
    let ran = rust_run(&bench.old_rust, &bench.dir, &samples, true)?;
    if ran.broke {
        bail!(
            "the Rust consumer fails against the current SDK: {}",
            ran.why
        );
    }
    let ts_check = bench.typescript(&texts)?;
    if ts_check.broke {
        bail!(
            "the TypeScript consumer fails against the current types: {}",
            ts_check.why
        );
    }
    let py_samples: Vec<Sample> = samples
        .iter()
        .filter(|s| python_type(base, s))
        .cloned()
        .collect();
    let py_check = bench.python(&texts, &py_samples, &[])?;
    if py_check.broke {
        bail!(
            "the Python consumer fails against the current clients: {}",
            py_check.why
        );
    }
    toolchain::done(t);
    Ok(bench)
}

fn rust_run(binary: &Path, dir: &Path, samples: &[Sample], calls: bool) -> Result<Outcome> {
    let file = dir.join("rust-samples.json");
    fs::write(&file, serde_json::to_string(samples)?)?;
    let mut c = Command::new(binary);
    c.arg(&file);
    if calls {
        c.arg("calls");
    }
    outcome(c.output(), "the Rust consumer")
}

/// One mutation through the three compilers: (rust, typescript, python) outcomes, and
/// cargo-semver-checks' when it ran.
fn prove(bench: &Bench, base: &Side, m: &Mutation) -> Result<([Outcome; 3], Option<Outcome>)> {
    let texts = apply(base, m)?;
    let mut old = example_samples(base);
    old.extend(m.old_samples.iter().cloned());
    let built = bench.build_rust(&texts)?;
    // The SDK's API, whether or not the consumer of the old one still builds on it.
    let semver = bench.semver()?;
    let rust = if built.broke {
        built
    } else {
        let run = rust_run(&bench.rust_binary(), &bench.dir, &old, true)?;
        if run.broke {
            run
        } else {
            rust_run(&bench.old_rust, &bench.dir, &m.new_samples, false)?
        }
    };
    let ts = bench.typescript(&texts)?;
    let py_old: Vec<Sample> = old
        .iter()
        .filter(|s| python_type(base, s))
        .cloned()
        .collect();
    let py = bench.python(&texts, &py_old, &m.new_samples)?;
    Ok(([rust, ts, py], semver))
}

/// cargo-semver-checks, from `PATH` or CI's tool cache (`.ci/tools.sh`).
fn semver_checks() -> Option<PathBuf> {
    let cache = std::env::var_os("LICENSING_CI_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/licensing-ci")));
    let candidates = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(cache.map(|c| c.join("bin")));
    candidates
        .map(|dir| dir.join("cargo-semver-checks"))
        .find(|p| p.is_file())
}

/// Where the rules and a recorded proof disagree: the rules' worst verdicts against the
/// compilers' (and cargo-semver-checks': a break it finds must be a Rust break).
pub fn check_proof(m: &Mutation, worst: &Verdicts, proof: &proven::Proof) -> Vec<String> {
    let mut problems = Vec::new();
    for (consumer, seen, rule) in [
        ("rust", proof.rust, worst.rust),
        ("typescript", proof.typescript, worst.typescript),
        ("python", proof.python, worst.python),
    ] {
        if seen != rule {
            problems.push(format!(
                "{}: {consumer}: spec-diff says {}, the compiler {} ({})",
                m.id,
                word(rule),
                word(seen),
                proof.why.get(consumer).map_or("", String::as_str)
            ));
        }
    }
    if proof.semver == Some(Verdict::Breaking) && worst.rust != Verdict::Breaking {
        problems.push(format!(
            "{}: cargo-semver-checks finds an API break where spec-diff says rust compatible ({})",
            m.id,
            proof.why.get("semver").map_or("", String::as_str)
        ));
    }
    problems
}

/// The command: every mutation (or those whose id contains `only`; with `stale`, those
/// whose recorded proof no longer holds); Ok(false) when a compiler and spec-diff
/// disagree anywhere. The compilers' verdicts are recorded in `proven.json`.
pub fn run(root: &Path, only: Option<&str>, stale: bool) -> Result<bool> {
    let started = Instant::now();
    let base = load::from_dir(&root.join("spec"), "spec/").map_err(|e| anyhow!("{e}"))?;
    let all = mutations(root)?;
    let inputs = proven::inputs_digest(root)?;
    let mut record = proven::Proven::load(root)?;
    let chosen: Vec<&Mutation> = all
        .iter()
        .filter(|m| only.is_none_or(|o| o.split(',').any(|o| m.id.contains(o))))
        .filter(|m| !stale || record.current(&inputs, m).is_none())
        .collect();
    if chosen.is_empty() {
        if stale {
            eprintln!(
                "spec-diff corpus: every mutation's recorded proof holds ({}); \
                 `cargo test -p xtask` holds the rules to it",
                proven::FILE
            );
            return Ok(true);
        }
        bail!("no mutation matches");
    }
    if record.inputs != inputs {
        // Proofs of other inputs prove nothing now.
        record.mutations.clear();
        record.inputs = inputs;
    }
    let bench = prepare(root, &base)?;
    let mut problems = Vec::new();
    let mut table = String::from(
        "| mutation | wire: old clients | wire: new clients | rust | typescript | python | schemas | semver-checks |\n|---|---|---|---|---|---|---|---|\n",
    );
    for m in &chosen {
        let t = toolchain::step(&format!("{}: {}", m.id, m.title));
        let (changes, worst) = judge(&base, m)?;
        problems.extend(check_expect(m, &changes, &worst));
        let proof = compile(&bench, &base, m)?;
        let wired = wire::prove(&base, m)?;
        let mut disagree = check_proof(m, &worst, &proof);
        disagree.extend(wire::check(m, &worst, &wired));
        table.push_str(&row(m, &worst, &proof, &wired, &disagree));
        problems.extend(disagree);
        record.mutations.insert(m.id.clone(), proof);
        toolchain::done(t);
    }
    record.save(root)?;
    let report = bench.dir.join("report.md");
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

/// One mutation through the compilers, as its record.
fn compile(bench: &Bench, base: &Side, m: &Mutation) -> Result<proven::Proof> {
    let (proofs, semver) = prove(bench, base, m)?;
    let seen = |o: &Outcome| {
        if o.broke {
            Verdict::Breaking
        } else {
            Verdict::Compatible
        }
    };
    let mut why = std::collections::BTreeMap::new();
    for (consumer, o) in ["rust", "typescript", "python"].iter().zip(&proofs) {
        if o.broke {
            why.insert(consumer.to_string(), o.why.clone());
        }
    }
    if let Some(o) = semver.as_ref().filter(|o| o.broke) {
        why.insert("semver".into(), o.why.clone());
    }
    Ok(proven::Proof {
        edits: proven::edits_digest(m),
        rust: seen(&proofs[0]),
        typescript: seen(&proofs[1]),
        python: seen(&proofs[2]),
        semver: semver.as_ref().map(seen),
        why,
    })
}

/// Prints what each proof said of `m`, and returns its row of the table (`≠` where a
/// proof and spec-diff disagree).
fn row(
    m: &Mutation,
    worst: &Verdicts,
    proof: &proven::Proof,
    wired: &wire::Proof,
    disagree: &[String],
) -> String {
    let seen = [
        (
            "wire_old_clients",
            wired.old_clients,
            wired.why.get("wire_old_clients"),
        ),
        (
            "wire_new_clients",
            wired.new_clients,
            wired.why.get("wire_new_clients"),
        ),
        ("rust", proof.rust, proof.why.get("rust")),
        ("typescript", proof.typescript, proof.why.get("typescript")),
        ("python", proof.python, proof.why.get("python")),
    ];
    let mut cells = Vec::new();
    for (consumer, got, why) in seen {
        let rule = worst.get(consumer).expect("known consumer");
        let by = if consumer.starts_with("wire") {
            "documents"
        } else {
            "compiler"
        };
        let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
        eprintln!(
            "    {consumer}: spec-diff {}, {by} {}{why}",
            word(rule),
            word(got)
        );
        let differs = disagree
            .iter()
            .any(|p| p.contains(&format!(": {consumer}: ")));
        cells.push(format!("{}{}", word(rule), if differs { " ≠" } else { "" }));
    }
    if let Some(v) = proof.semver {
        eprintln!("    cargo-semver-checks: {}", word(v));
    }
    cells.push(word(worst.schemas).to_string());
    cells.push(proof.semver.map_or("not run", word).to_string());
    format!("| {} ({}) | {} |\n", m.title, m.id, cells.join(" | "))
}

fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Breaking => "breaking",
        Verdict::Compatible => "compatible",
    }
}

#[cfg(test)]
mod tests;
