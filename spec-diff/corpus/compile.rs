//! One mutation through the compilers: the consumers of the current specs built and run
//! against what the mutated ones generate, the outcome as its record, and its row of the
//! run's table.

use std::collections::BTreeMap;

use anyhow::Result;

use licensing_spec_diff::load::Side;
use licensing_spec_diff::rules::{Verdict, Verdicts};

use super::bench::{Bench, Outcome, python_type, rust_run};
use super::check::word;
use super::proven::{Proof, Single, edits_digest};
use super::{Mutation, Sample, apply, example_samples, wire};

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

/// One mutation through the compilers, as its record.
pub fn compile(bench: &Bench, base: &Side, m: &Mutation) -> Result<Proof> {
    let (proofs, semver) = prove(bench, base, m)?;
    let seen = |o: &Outcome| {
        if o.broke {
            Verdict::Breaking
        } else {
            Verdict::Compatible
        }
    };
    let mut why = BTreeMap::new();
    for (consumer, o) in ["rust", "typescript", "python"].iter().zip(&proofs) {
        if o.broke {
            why.insert(consumer.to_string(), o.why.clone());
        }
    }
    if let Some(o) = semver.as_ref().filter(|o| o.broke) {
        why.insert("semver".into(), o.why.clone());
    }
    Ok(Proof {
        edits: edits_digest(m),
        rust: seen(&proofs[0]),
        typescript: seen(&proofs[1]),
        python: seen(&proofs[2]),
        semver: semver.as_ref().map(seen),
        why,
    })
}

/// Prints what each proof said of `m`, and returns its row of the table (`≠` where a
/// proof and spec-diff disagree; `not run` where no proof holds).
pub fn row(
    m: &Mutation,
    worst: &Verdicts,
    proof: Option<&Proof>,
    own: &[(&str, Option<&Single>)],
    wired: &wire::Proof,
    disagree: &[String],
) -> String {
    let mut seen = vec![
        (
            "wire_old_clients",
            Some(wired.old_clients),
            wired.why.get("wire_old_clients"),
        ),
        (
            "wire_new_clients",
            Some(wired.new_clients),
            wired.why.get("wire_new_clients"),
        ),
    ];
    for consumer in ["rust", "typescript", "python"] {
        let got = proof.map(|p| match consumer {
            "rust" => p.rust,
            "typescript" => p.typescript,
            _ => p.python,
        });
        seen.push((consumer, got, proof.and_then(|p| p.why.get(consumer))));
    }
    for (consumer, single) in own {
        seen.push((
            consumer,
            single.map(|s| s.verdict),
            single.and_then(|s| s.why.as_ref()),
        ));
    }
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
            got.map_or("not run", word)
        );
        let differs = disagree
            .iter()
            .any(|p| p.contains(&format!(": {consumer}: ")));
        cells.push(format!("{}{}", word(rule), if differs { " ≠" } else { "" }));
    }
    let semver = proof.and_then(|p| p.semver);
    if let Some(v) = semver {
        eprintln!("    cargo-semver-checks: {}", word(v));
    }
    cells.push(word(worst.schemas).to_string());
    cells.push(semver.map_or("not run", word).to_string());
    format!("| {} ({}) | {} |\n", m.title, m.id, cells.join(" | "))
}
