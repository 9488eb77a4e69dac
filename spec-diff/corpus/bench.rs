//! The corpus's workbench: where the consumers are built and run, and how each language's
//! tools are called on a side's spec texts.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use licensing_clients::toolchain;
use licensing_spec_diff::load::{FILES, Side};

use super::{PYTHON_CONSUMER, Sample};

/// What a build or a run of a consumer said: whether it broke, and the first lines why.
pub struct Outcome {
    pub broke: bool,
    pub why: String,
}

pub fn outcome(result: std::io::Result<std::process::Output>, what: &str) -> Result<Outcome> {
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
pub struct Bench {
    pub root: PathBuf,
    pub dir: PathBuf,
    pub node_bin: PathBuf,
    pub py_bin: PathBuf,
    /// The Rust consumer built against the current SDK: reads `new_samples`.
    pub old_rust: PathBuf,
    /// cargo-semver-checks (`cargo` to run it with), and the current SDK's rustdoc JSON.
    pub semver: Option<PathBuf>,
}

impl Bench {
    pub fn rust_dir(&self) -> PathBuf {
        self.dir.join("rust")
    }

    /// Writes the SDK package with `texts` as its `spec/` (the package's own files from the
    /// repository; its manifest without the workspace's sections), and builds the consumer.
    pub fn build_rust(&self, texts: &[(&'static str, String, String)]) -> Result<Outcome> {
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
    pub fn rustdoc(&self, name: &str) -> Result<PathBuf> {
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
    pub fn semver(&self) -> Result<Option<Outcome>> {
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

    pub fn rust_binary(&self) -> PathBuf {
        self.rust_dir().join("target/debug/spec-diff-consumer")
    }

    pub fn typescript(&self, texts: &[(&'static str, String, String)]) -> Result<Outcome> {
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

    pub fn python_generate(
        &self,
        texts: &[(&'static str, String, String)],
        into: &Path,
    ) -> Result<()> {
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

    pub fn python_parse(&self, packages: &Path, samples: &[Sample]) -> Result<Outcome> {
        let file = packages.join("samples.json");
        fs::write(&file, serde_json::to_string(samples)?)?;
        outcome(
            Command::new(self.py_bin.join("python"))
                .arg(self.root.join(PYTHON_CONSUMER))
                .arg("parse")
                .arg(&file)
                .env("PYTHONPATH", packages)
                .output(),
            "consumer.py parse",
        )
    }

    pub fn python(
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

pub fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The Rust consumer run on `samples` (and, with `calls`, awaiting every operation).
pub fn rust_run(binary: &Path, dir: &Path, samples: &[Sample], calls: bool) -> Result<Outcome> {
    let file = dir.join("rust-samples.json");
    fs::write(&file, serde_json::to_string(samples)?)?;
    let mut c = Command::new(binary);
    c.arg(&file);
    if calls {
        c.arg("calls");
    }
    outcome(c.output(), "the Rust consumer")
}

/// Whether Python has a model or literal enum for the schema (plain strings and lists
/// have none: nothing to decode them with).
pub fn python_type(base: &Side, s: &Sample) -> bool {
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

/// cargo-semver-checks, from `PATH` or CI's tool cache (`.ci/tools.sh`).
pub fn semver_checks() -> Option<PathBuf> {
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
