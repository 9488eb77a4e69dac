//! The corpus's set-up: the tools, and a consumer of the current specs in each language
//! (the Rust one beside a copy of the SDK package, the TypeScript one beside the current
//! types, the Python one written from the current clients), each checked against the
//! current specs themselves first, or its verdicts would prove nothing.

use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

use licensing_clients::toolchain;
use licensing_spec_diff::load::Side;

use super::bench::{Bench, python_type, rust_run, semver_checks, write_if_changed};
use super::{PYTHON_CONSUMER, Sample, example_samples, rust, typescript};

/// The spec texts of a side, as the tools take them: (service, file, text).
type Texts = Vec<(&'static str, String, String)>;

/// The tools installed and the consumers of the current specs written and checked.
pub fn prepare(root: &Path, base: &Side) -> Result<Bench> {
    let t = toolchain::step("spec-diff corpus: tools and the consumers of the current specs");
    let target = toolchain::target_dir(root)?;
    let dir = target.join("spec-diff-corpus");
    let ts_tools = target.join("clients").join("typescript");
    toolchain::npm_ci(&root.join("clients/typescript"), &ts_tools)?;
    let py_bin = toolchain::venv(
        &root.join("clients/python/requirements.txt"),
        &target.join("clients").join("venv"),
    )?;
    rust_consumer(root, &dir, base)?;
    let node_bin = ts_tools.join("node_modules").join(".bin");
    typescript_consumer(&dir, &node_bin, base)?;
    let bench = Bench {
        root: root.to_path_buf(),
        dir: dir.clone(),
        node_bin,
        py_bin,
        old_rust: dir.join("rust").join("consumer-current"),
        semver: semver_checks(),
    };
    let texts: Texts = base
        .specs
        .iter()
        .map(|s| (s.service, s.file.clone(), s.text.clone()))
        .collect();
    python_consumer(&bench, base, &texts)?;
    check_current(&bench, base, &texts)?;
    toolchain::done(t);
    Ok(bench)
}

/// Rust: the SDK package (its spec/ written per mutation) and the consumer, written from
/// the code generated from the current specs.
fn rust_consumer(root: &Path, dir: &Path, base: &Side) -> Result<()> {
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
    )
}

/// TypeScript: the old types and the consumers.
fn typescript_consumer(dir: &Path, node_bin: &Path, base: &Side) -> Result<()> {
    let ts = dir.join("typescript");
    fs::create_dir_all(ts.join("old"))?;
    fs::create_dir_all(ts.join("new"))?;
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
    Ok(())
}

/// Python: the old packages and the consumer written from them.
fn python_consumer(bench: &Bench, base: &Side, texts: &Texts) -> Result<()> {
    let py = bench.dir.join("python");
    let old = py.join("old");
    let _ = fs::remove_dir_all(&old);
    bench.python_generate(texts, &old)?;
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
        Command::new(bench.py_bin.join("python"))
            .arg(bench.root.join(PYTHON_CONSUMER))
            .arg("generate")
            .arg(py.join("consumer.py"))
            .arg(py.join("usage.json"))
            .env("PYTHONPATH", &old),
    )
}

/// Each consumer must pass against the current specs themselves, or it proves nothing.
fn check_current(bench: &Bench, base: &Side, texts: &Texts) -> Result<()> {
    let samples = example_samples(base);
    let rust = bench.build_rust(texts)?;
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
    let ts_check = bench.typescript(texts)?;
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
    let py_check = bench.python(texts, &py_samples, &[])?;
    if py_check.broke {
        bail!(
            "the Python consumer fails against the current clients: {}",
            py_check.why
        );
    }
    Ok(())
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
