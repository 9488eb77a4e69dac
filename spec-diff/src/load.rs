//! The two sides of a comparison: both specs read from a directory or from a git revision,
//! each parsed and checked by the generator's own spec model (`licensing-spec`),
//! so that a document the SDK could not be generated from is a usage error naming its file.

use std::path::Path;
use std::process::Command;

use openapiv3::OpenAPI;

/// The services, in the build script's order: (name, file under the spec directory).
pub const FILES: [(&str, &str); 2] = [("order", "order.yaml"), ("member", "member.yaml")];

/// One side's specs, parsed.
pub struct Side {
    /// Where they came from, for the report (`spec/`, `v0.1.0 (commit 1a2b…)`, a directory).
    pub label: String,
    /// What was read: a directory or a commit (the report names which).
    pub source: Source,
    /// (service, file as named in messages, text, parsed document)
    pub specs: Vec<Loaded>,
}

pub struct Loaded {
    pub service: &'static str,
    pub file: String,
    pub text: String,
    pub api: OpenAPI,
}

/// Where a side's specs were read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Source {
    /// `order.yaml` and `member.yaml` of this directory, as given.
    Directory { path: String },
    /// `spec/` at this revision, resolved to `commit` before anything was read.
    Revision { revision: String, commit: String },
    /// Texts handed over in-process (the corpus's mutated specs).
    Texts,
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
/// of the repository at `root`, resolved to a commit and read as `git show
/// COMMIT:<spec_dir>/<file>` (`spec_dir` from the repository's top).
/// A value that starts with `-` is neither: git would take it as an option (`--output=…`
/// writes files), so it is refused before anything runs (`./-dir` names such a directory).
pub fn side(root: &Path, spec_dir: &str, source: &str) -> Result<Side, UsageError> {
    if source.starts_with('-') {
        return Err(UsageError(format!(
            "--base: `{}` starts with `-`: give a git revision or a directory, not an option \
             (`./{}` for a directory of that name)",
            source.escape_debug(),
            source.escape_debug()
        )));
    }
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
    from_git(root, spec_dir, source)
}

pub fn from_dir(dir: &Path, label: &str) -> Result<Side, UsageError> {
    let mut texts = Vec::new();
    for (service, file) in FILES {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| UsageError(format!("{}: cannot read: {e}", path.display())))?;
        texts.push((service, path.display().to_string(), text));
    }
    let mut side = parse(label, texts)?;
    side.source = Source::Directory {
        path: dir.display().to_string(),
    };
    Ok(side)
}

/// `rev` as the commit it names, asked of git with `--end-of-options` so that no value is
/// read as an option, and `^{commit}` so that a tree or a blob is refused.
fn commit_of(root: &Path, rev: &str) -> Result<String, UsageError> {
    let output = Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"))
        .current_dir(root)
        .output()
        .map_err(|e| UsageError(format!("--base {rev}: cannot run git: {e}")))?;
    let commit = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() || commit.is_empty() {
        return Err(UsageError(format!(
            "--base: `{}` is neither a directory nor a commit of {}",
            rev.escape_debug(),
            root.display()
        )));
    }
    Ok(commit)
}

fn from_git(root: &Path, spec_dir: &str, rev: &str) -> Result<Side, UsageError> {
    let commit = commit_of(root, rev)?;
    let spec_dir = spec_dir.trim_end_matches('/');
    let mut texts = Vec::new();
    for (service, file) in FILES {
        let object = format!("{commit}:{spec_dir}/{file}");
        let output = Command::new("git")
            .args(["show", "--end-of-options", &object])
            .current_dir(root)
            .output()
            .map_err(|e| UsageError(format!("{object}: cannot run git: {e}")))?;
        if !output.status.success() {
            return Err(UsageError(format!(
                "{rev} ({object}): no such file at that commit ({})",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let text = String::from_utf8(output.stdout)
            .map_err(|_| UsageError(format!("{object}: not UTF-8")))?;
        texts.push((service, format!("{rev}:{spec_dir}/{file}"), text));
    }
    let mut side = parse(&format!("{rev} (commit {commit})"), texts)?;
    side.source = Source::Revision {
        revision: rev.to_string(),
        commit,
    };
    Ok(side)
}

/// Parses and checks already-read texts (the corpus's mutated specs come this way).
pub fn parse(label: &str, texts: Vec<(&'static str, String, String)>) -> Result<Side, UsageError> {
    let mut specs = Vec::new();
    for (service, file, text) in texts {
        let api = licensing_spec::load(&text)
            .map_err(|e| UsageError(format!("{file}: {}", one_line(&e))))?;
        // The facts the SDK needs of every operation: a spec the generator refuses is
        // not a version anyone could be handed.
        licensing_spec::operations(&api)
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
        source: Source::Texts,
        specs,
    })
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
