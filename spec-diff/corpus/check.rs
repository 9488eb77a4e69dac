//! spec-diff's verdicts on a mutation, held to what the mutation expects and to what the
//! compilers said of it.

use anyhow::{Result, anyhow};

use licensing_spec_diff::Change;
use licensing_spec_diff::load::{self, Side};
use licensing_spec_diff::rules::{CONSUMERS, Verdict, Verdicts};

use super::proven::Proof;
use super::{Mutation, apply};

/// What spec-diff says of a mutation: the changes, and the worst verdict per consumer.
pub fn judge(base: &Side, m: &Mutation) -> Result<(Vec<Change>, Verdicts)> {
    let head = load::parse(&m.id, apply(base, m)?).map_err(|e| anyhow!("{e}"))?;
    let changes = licensing_spec_diff::changes(base, &head);
    let worst = changes
        .iter()
        .fold(Verdicts::NONE, |acc, c| acc.max(c.verdicts));
    Ok((changes, worst))
}

/// spec-diff's verdicts against the mutation's `expect`; the differences, one a line.
pub fn check_expect(m: &Mutation, changes: &[Change], worst: &Verdicts) -> Vec<String> {
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

/// Where the rules and a recorded proof disagree: the rules' worst verdicts against the
/// compilers' (and cargo-semver-checks': a break it finds must be a Rust break).
pub fn check_proof(m: &Mutation, worst: &Verdicts, proof: &Proof) -> Vec<String> {
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

/// Where the rules and the recorded verdicts of the consumers proved on their own inputs
/// (Java, Go) disagree.
pub fn check_own(
    m: &Mutation,
    worst: &Verdicts,
    singles: &[(&str, Option<&super::proven::Single>)],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (consumer, single) in singles {
        let Some(single) = single else { continue };
        let rule = worst.get(consumer).expect("known consumer");
        if single.verdict != rule {
            problems.push(format!(
                "{}: {consumer}: spec-diff says {}, the compiler {} ({})",
                m.id,
                word(rule),
                word(single.verdict),
                single.why.as_deref().unwrap_or("")
            ));
        }
    }
    problems
}

pub fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Breaking => "breaking",
        Verdict::Compatible => "compatible",
    }
}
