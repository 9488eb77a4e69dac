//! What `spec-diff` prints: the changes grouped by operation (markdown) or as JSON, and
//! the version each published package needs next.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde::Serialize;
use serde_json::Value;

use licensing_escape::markdown;

use super::compare::Change;
use super::load::{Side, Source};
use super::rules::{CONSUMERS, Verdict, Verdicts};

/// The markdown table's header for each of [`CONSUMERS`].
const HEADERS: [&str; 8] = [
    "wire: old clients",
    "wire: new clients",
    "rust",
    "typescript",
    "python",
    "java",
    "go",
    "schemas",
];

/// Where a change that no operation uses is listed in the markdown.
const NO_OPERATION: &str = "(no operation)";

/// How much a package's version must move, by cargo's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bump {
    None,
    Patch,
    Minor,
    Major,
}

/// A package that is published (`publish` is not `false`).
#[derive(Clone, Debug)]
pub struct Package {
    pub name: String,
    pub version: String,
    /// It depends on `licensing-sdk` (normal dependency): it carries the documents.
    pub uses_sdk: bool,
}

/// The published packages of the cargo workspace at `root`, from `cargo metadata` (the
/// `cargo` that runs this process, else the one on `PATH`).
pub fn packages(root: &Path) -> Result<Vec<Package>, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("{}: cannot run cargo metadata: {e}", root.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{}: cargo metadata failed: {}",
            root.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let meta: Value = serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for p in meta["packages"].as_array().into_iter().flatten() {
        // `publish = false` is an empty list of registries; absent is `null`.
        if p["publish"].as_array().is_some_and(Vec::is_empty) {
            continue;
        }
        let uses_sdk =
            p["dependencies"].as_array().into_iter().flatten().any(|d| {
                d["name"] == "licensing-sdk" && (d["kind"].is_null() || d["kind"] == "build")
            });
        out.push(Package {
            name: p["name"].as_str().unwrap_or_default().to_string(),
            version: p["version"].as_str().unwrap_or_default().to_string(),
            uses_sdk,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The bump of each package:
///
/// * `licensing-sdk` is generated from the documents: the `rust` verdicts decide;
/// * a package that depends on it (the simulator serves the documents, the proxy checks
///   traffic against them) follows the `wire_old_clients` verdicts (its release is a new
///   deployment of the documents in front of the clients already written), and is
///   released with every SDK release since it requires the SDK's exact version;
/// * any other package does not read `spec/` and stays.
///
/// A breaking change is a minor bump below 1.0 and a major one from 1.0 on; any other
/// change is a patch.
pub fn bumps(changes: &[Change], packages: &[Package]) -> BTreeMap<String, Bump> {
    let worst = |pick: fn(&Verdicts) -> Verdict| {
        if changes.is_empty() {
            None
        } else {
            Some(changes.iter().map(|c| pick(&c.verdicts)).max())
        }
    };
    let rust = worst(|v| v.rust);
    let wire = worst(|v| v.wire_old_clients);
    let bump = |version: &str, verdict: Option<Option<Verdict>>| match verdict {
        None => Bump::None,
        Some(Some(Verdict::Breaking)) if version.starts_with("0.") => Bump::Minor,
        Some(Some(Verdict::Breaking)) => Bump::Major,
        Some(_) => Bump::Patch,
    };
    packages
        .iter()
        .map(|p| {
            let b = if p.name == "licensing-sdk" {
                bump(&p.version, rust)
            } else if p.uses_sdk {
                bump(&p.version, wire)
            } else {
                Bump::None
            };
            (p.name.clone(), b)
        })
        .collect()
}

#[derive(Serialize)]
struct JsonChange<'a> {
    spec: &'a str,
    /// `null` for a change that no operation uses.
    operation: Option<&'a str>,
    pointer: &'a str,
    summary: &'a str,
    #[serde(flatten)]
    verdicts: Verdicts,
}

pub fn json(
    base: &Side,
    head: &Side,
    changes: &[Change],
    bumps: &BTreeMap<String, Bump>,
) -> String {
    let changes: Vec<JsonChange> = changes
        .iter()
        .map(|c| JsonChange {
            spec: &c.spec,
            operation: c.operation.as_deref(),
            pointer: &c.pointer,
            summary: &c.summary,
            verdicts: c.verdicts,
        })
        .collect();
    #[derive(Serialize)]
    struct Report<'a> {
        base: &'a Source,
        head: &'a Source,
        changes: Vec<JsonChange<'a>>,
        bump: &'a BTreeMap<String, Bump>,
    }
    let report = Report {
        base: &base.source,
        head: &head.source,
        changes,
        bump: bumps,
    };
    serde_json::to_string_pretty(&report).expect("plain data") + "\n"
}

fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Breaking => "**breaking**",
        Verdict::Compatible => "compatible",
    }
}

/// A summary as markdown: the parts it quotes between backticks (names and values from a
/// spec) as code spans, the rest as escaped text. A value that holds a backtick itself
/// splits differently, but every part is escaped either way: nothing in it is markup.
fn summary(s: &str) -> String {
    s.split('`')
        .enumerate()
        .map(|(i, part)| match (i % 2, part.is_empty()) {
            (_, true) => String::new(),
            (0, false) => {
                // The spaces beside a code span, kept as spaces (`text` writes an edge
                // space as `&#32;`, for a value that is a whole cell).
                let core = part.trim_matches(' ');
                let start = part.len() - part.trim_start_matches(' ').len();
                let end = part.len() - part.trim_end_matches(' ').len();
                let end = if core.is_empty() { 0 } else { end };
                format!(
                    "{}{}{}",
                    " ".repeat(start),
                    markdown::text(core),
                    " ".repeat(end)
                )
            }
            _ => markdown::code(part),
        })
        .collect()
}

/// Where a side was read, for the title: the revision with its commit, or the directory.
fn source(side: &Side) -> String {
    match &side.source {
        Source::Directory { path } => format!("directory {}", markdown::code(path)),
        Source::Revision { revision, commit } => format!(
            "{} (commit {})",
            markdown::code(revision),
            markdown::code(commit)
        ),
        Source::Texts => markdown::code(&side.label),
    }
}

/// The report as markdown; `bumps` is `None` when no workspace was given.
pub fn markdown(
    base: &Side,
    head: &Side,
    changes: &[Change],
    bumps: Option<&BTreeMap<String, Bump>>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Spec changes: {} → {}\n", source(base), source(head));
    if changes.is_empty() {
        out.push_str("No change.\n\n");
    } else {
        let breaking = changes.iter().filter(|c| c.verdicts.any_breaking()).count();
        let _ = writeln!(
            out,
            "{} change(s), {breaking} breaking for at least one consumer. \
             *wire: old clients*: clients of the base against a deployment of the head (the \
             platform deploys first); *wire: new clients*: clients of the head against a \
             deployment of the base (a partner upgrades first); *java* and *go*: code on \
             openapi-generator's Java client and oapi-codegen's Go client of the base, compiled \
             against the head's.\n",
            changes.len()
        );
        let mut groups: BTreeMap<(&str, &str), Vec<&Change>> = BTreeMap::new();
        for c in changes {
            let operation = c.operation.as_deref().unwrap_or(NO_OPERATION);
            groups.entry((&c.spec, operation)).or_default().push(c);
        }
        for ((spec, operation), list) in groups {
            let _ = writeln!(
                out,
                "## {}: {}\n",
                markdown::text(spec),
                markdown::text(operation)
            );
            let _ = writeln!(out, "| change | {} |", HEADERS.join(" | "));
            let _ = writeln!(out, "|---|{}", "---|".repeat(CONSUMERS.len()));
            for c in list {
                let cells: Vec<&str> = c.verdicts.all().into_iter().map(mark).collect();
                let _ = writeln!(
                    out,
                    "| {} <br>{} | {} |",
                    summary(&c.summary),
                    markdown::code(&c.pointer),
                    cells.join(" | ")
                );
            }
            out.push('\n');
        }
    }
    out.push_str("## Versions\n\n");
    let Some(bumps) = bumps else {
        out.push_str("Not judged: no cargo workspace was given (`--workspace`).\n");
        return out;
    };
    out.push_str("| package | bump |\n|---|---|\n");
    for (name, bump) in bumps {
        let _ = writeln!(out, "| {} | {} |", markdown::text(name), to_word(*bump));
    }
    out
}

pub fn to_word(b: Bump) -> &'static str {
    match b {
        Bump::None => "none",
        Bump::Patch => "patch",
        Bump::Minor => "minor",
        Bump::Major => "major",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Dir, Kind, verdicts};

    fn change(kind: Kind, dir: Dir) -> Change {
        Change {
            spec: "order".into(),
            operation: Some("op".into()),
            pointer: "/x".into(),
            summary: "s".into(),
            verdicts: verdicts(&kind, dir),
        }
    }

    fn packages() -> Vec<Package> {
        let p = |name: &str, version: &str, uses_sdk| Package {
            name: name.into(),
            version: version.into(),
            uses_sdk,
        };
        vec![
            p("licensing-sdk", "0.1.0", false),
            p("licensing-sim", "0.1.0", true),
            p("licensing-codegen", "0.1.0", false),
            p("licensing-proxy", "1.2.0", true),
        ]
    }

    #[test]
    fn a_breaking_change_is_a_minor_bump_below_one_and_a_major_one_above() {
        // Breaks the Rust SDK only: the SDK moves a minor step, its dependents a patch.
        let b = bumps(
            &[change(
                Kind::PropertyAdded {
                    required: false,
                    closed: false,
                },
                Dir::Reply,
            )],
            &packages(),
        );
        assert_eq!(b["licensing-sdk"], Bump::Minor);
        assert_eq!(b["licensing-sim"], Bump::Patch);
        assert_eq!(b["licensing-codegen"], Bump::None);
        // Breaks the wire: the packages that serve or check the documents move too.
        let b = bumps(&[change(Kind::OperationRemoved, Dir::Both)], &packages());
        assert_eq!(b["licensing-sim"], Bump::Minor);
        assert_eq!(b["licensing-proxy"], Bump::Major);
    }

    #[test]
    fn no_change_moves_no_version_and_documentation_is_a_patch() {
        assert!(bumps(&[], &packages()).values().all(|b| *b == Bump::None));
        let b = bumps(&[change(Kind::Documentation, Dir::Both)], &packages());
        assert_eq!(b["licensing-sdk"], Bump::Patch);
        assert_eq!(b["licensing-codegen"], Bump::None);
    }

    fn side(source: Source) -> Side {
        Side {
            label: "spec/".into(),
            source,
            specs: vec![],
        }
    }

    #[test]
    fn json_has_the_documented_shape() {
        let mut c = vec![change(
            Kind::ParameterRemoved { required: true },
            Dir::Request,
        )];
        let mut unused = change(Kind::SchemaAdded, Dir::Both);
        unused.operation = None;
        c.push(unused);
        let base = side(Source::Revision {
            revision: "v1".into(),
            commit: "abc".into(),
        });
        let head = side(Source::Directory { path: "/s".into() });
        let text = json(&base, &head, &c, &bumps(&c, &packages()));
        let v: Value = serde_json::from_str(&text).unwrap();
        let first = &v["changes"][0];
        for key in ["spec", "operation", "pointer", "summary"] {
            assert!(first[key].is_string(), "{key}");
        }
        // A required parameter removed: old clients still send it (ignored), new clients
        // no longer do, and the old deployment requires it.
        assert_eq!(first["wire_old_clients"], "compatible");
        assert_eq!(first["wire_new_clients"], "breaking");
        assert_eq!(first["rust"], "breaking");
        assert_eq!(first["schemas"], "compatible");
        assert_eq!(v["changes"][1]["operation"], Value::Null);
        assert!(!text.contains("(no operation)"));
        assert_eq!(v["bump"]["licensing-sdk"], "minor");
        assert_eq!(v["base"]["kind"], "revision");
        assert_eq!(v["base"]["commit"], "abc");
        assert_eq!(v["head"]["kind"], "directory");
        assert_eq!(v["head"]["path"], "/s");
    }

    #[test]
    fn markdown_keeps_the_wording_for_a_change_no_operation_uses() {
        let mut unused = change(Kind::SchemaAdded, Dir::Both);
        unused.operation = None;
        let c = [unused];
        let (base, head) = (side(Source::Texts), side(Source::Texts));
        let text = markdown(&base, &head, &c, Some(&bumps(&c, &packages())));
        assert!(text.contains("## order: \\(no operation\\)"), "{text}");
        assert!(
            text.contains("| wire: old clients | wire: new clients |"),
            "{text}"
        );
    }

    #[test]
    fn markdown_without_a_workspace_says_no_version_was_judged() {
        let c = [change(Kind::OperationRemoved, Dir::Both)];
        let (base, head) = (side(Source::Texts), side(Source::Texts));
        let text = markdown(&base, &head, &c, None);
        let versions = &text[text.find("## Versions").expect("the section")..];
        assert!(versions.contains("Not judged"), "{text}");
        assert!(!versions.contains("| package | bump |"), "{text}");
        // The changes are all there: the versions are what a workspace adds.
        assert!(text.contains("**breaking**"), "{text}");
    }
}
