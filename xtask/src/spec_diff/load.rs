//! The two sides of a comparison: both specs read from a directory or from a git revision,
//! each parsed and checked by the generator's own spec model (`licensing_codegen::spec`),
//! so that a document the SDK could not be generated from is a usage error naming its file.

use std::path::Path;
use std::process::Command;

use openapiv3::OpenAPI;

/// The services, in the build script's order: (name, file under the spec directory).
pub const FILES: [(&str, &str); 2] = [("order", "order.yaml"), ("member", "member.yaml")];

/// One side's specs, parsed.
pub struct Side {
    /// Where they came from, for the report (`spec/`, `v0.1.0`, a directory).
    pub label: String,
    /// (service, file as named in messages, text, parsed document)
    pub specs: Vec<Loaded>,
}

pub struct Loaded {
    pub service: &'static str,
    pub file: String,
    pub text: String,
    pub api: OpenAPI,
}

/// A spec that cannot be compared: unreadable, not OpenAPI, or refused by the generator.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `source` is a directory holding `order.yaml` and `member.yaml`, or else a git revision
/// of the repository at `root`, read as `git show REV:spec/<file>`.
pub fn side(root: &Path, source: &str) -> Result<Side, UsageError> {
    let dir = Path::new(source);
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(dir))
            .unwrap_or_else(|_| dir.to_path_buf())
    };
    if dir.is_dir() {
        return from_dir(&dir, source);
    }
    from_git(root, source)
}

pub fn from_dir(dir: &Path, label: &str) -> Result<Side, UsageError> {
    let mut texts = Vec::new();
    for (service, file) in FILES {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| UsageError(format!("{}: cannot read: {e}", path.display())))?;
        texts.push((service, path.display().to_string(), text));
    }
    parse(label, texts)
}

fn from_git(root: &Path, rev: &str) -> Result<Side, UsageError> {
    let mut texts = Vec::new();
    for (service, file) in FILES {
        let object = format!("{rev}:spec/{file}");
        let output = Command::new("git")
            .args(["show", &object])
            .current_dir(root)
            .output()
            .map_err(|e| UsageError(format!("{object}: cannot run git: {e}")))?;
        if !output.status.success() {
            return Err(UsageError(format!(
                "{object}: neither a directory nor a file at a git revision ({})",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let text = String::from_utf8(output.stdout)
            .map_err(|_| UsageError(format!("{object}: not UTF-8")))?;
        texts.push((service, object, text));
    }
    parse(rev, texts)
}

/// Parses and checks already-read texts (the corpus's mutated specs come this way).
pub fn parse(label: &str, texts: Vec<(&'static str, String, String)>) -> Result<Side, UsageError> {
    let mut specs = Vec::new();
    for (service, file, text) in texts {
        let api = licensing_codegen::spec::load(&text)
            .map_err(|e| UsageError(format!("{file}: {}", one_line(&e))))?;
        // The facts the SDK needs of every operation: a spec the generator refuses is
        // not a version anyone could be handed.
        licensing_codegen::spec::operations(&api)
            .map_err(|e| UsageError(format!("{file}: {}", one_line(&e))))?;
        specs.push(Loaded {
            service,
            file,
            text,
            api,
        });
    }
    Ok(Side {
        label: label.to_string(),
        specs,
    })
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
