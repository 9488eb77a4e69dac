//! What `spec-diff` prints: the changes grouped by operation (markdown) or as JSON, and
//! the version each published package needs next.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde::Serialize;
use serde_json::Value;

use super::compare::Change;
use super::rules::{CONSUMERS, Verdict, Verdicts};

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

/// The workspace's published packages, from `cargo metadata`.
pub fn packages(root: &Path) -> Result<Vec<Package>, String> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
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
///   traffic against them) follows the `wire` verdicts, and is released with every SDK
///   release since it requires the SDK's exact version;
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
    let wire = worst(|v| v.wire);
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
    operation: &'a str,
    pointer: &'a str,
    summary: &'a str,
    wire: Verdict,
    rust: Verdict,
    typescript: Verdict,
    python: Verdict,
    schemas: Verdict,
}

pub fn json(changes: &[Change], bumps: &BTreeMap<String, Bump>) -> String {
    let changes: Vec<JsonChange> = changes
        .iter()
        .map(|c| JsonChange {
            spec: &c.spec,
            operation: &c.operation,
            pointer: &c.pointer,
            summary: &c.summary,
            wire: c.verdicts.wire,
            rust: c.verdicts.rust,
            typescript: c.verdicts.typescript,
            python: c.verdicts.python,
            schemas: c.verdicts.schemas,
        })
        .collect();
    #[derive(Serialize)]
    struct Report<'a> {
        changes: Vec<JsonChange<'a>>,
        bump: &'a BTreeMap<String, Bump>,
    }
    let report = Report {
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

pub fn markdown(
    base: &str,
    head: &str,
    changes: &[Change],
    bumps: &BTreeMap<String, Bump>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Spec changes: {base} → {head}\n");
    if changes.is_empty() {
        out.push_str("No change.\n\n");
    } else {
        let breaking = changes.iter().filter(|c| c.verdicts.any_breaking()).count();
        let _ = writeln!(
            out,
            "{} change(s), {breaking} breaking for at least one consumer.\n",
            changes.len()
        );
        let mut groups: BTreeMap<(&str, &str), Vec<&Change>> = BTreeMap::new();
        for c in changes {
            groups.entry((&c.spec, &c.operation)).or_default().push(c);
        }
        for ((spec, operation), list) in groups {
            let _ = writeln!(out, "## {spec}: {operation}\n");
            let _ = writeln!(out, "| change | {} |", CONSUMERS.join(" | "));
            let _ = writeln!(out, "|---|{}", "---|".repeat(CONSUMERS.len()));
            for c in list {
                let cells: Vec<&str> = c.verdicts.all().into_iter().map(mark).collect();
                let _ = writeln!(
                    out,
                    "| {} <br>`{}` | {} |",
                    c.summary.replace('|', "\\|"),
                    c.pointer,
                    cells.join(" | ")
                );
            }
            out.push('\n');
        }
    }
    out.push_str("## Versions\n\n| package | bump |\n|---|---|\n");
    for (name, bump) in bumps {
        let _ = writeln!(out, "| {name} | {} |", to_word(*bump));
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
    use crate::spec_diff::rules::{Dir, Kind, verdicts};

    fn change(kind: Kind, dir: Dir) -> Change {
        Change {
            spec: "order".into(),
            operation: "op".into(),
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
            &[change(Kind::PropertyAdded { required: false }, Dir::Reply)],
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

    #[test]
    fn json_has_the_documented_shape() {
        let c = [change(Kind::ParameterRemoved, Dir::Request)];
        let v: Value = serde_json::from_str(&json(&c, &bumps(&c, &packages()))).unwrap();
        let first = &v["changes"][0];
        for key in ["spec", "operation", "pointer", "summary"] {
            assert!(first[key].is_string(), "{key}");
        }
        assert_eq!(first["wire"], "compatible");
        assert_eq!(first["rust"], "breaking");
        assert_eq!(first["schemas"], "compatible");
        assert_eq!(v["bump"]["licensing-sdk"], "minor");
    }
}
