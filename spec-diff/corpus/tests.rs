//! The corpus checked without the compilers: the rules against every mutation's
//! expectations, the recorded proofs and the documents' own verdicts on the wire.

use super::check::{check_expect, check_own, check_proof, judge};
use super::*;
use licensing_spec_diff::rules::Verdicts;

/// spec-diff against every mutation's expected verdicts: the rules as the corpus last
/// proved them, checked without the compilers.
#[test]
fn every_mutation_gets_its_expected_verdicts() {
    let root = root();
    let base = load::from_dir(&root.join("spec"), "spec/").expect("current specs");
    let all = mutations(&root).expect("mutations");
    assert!(all.len() >= 30, "{} mutations", all.len());
    let mut problems = Vec::new();
    for m in &all {
        match judge(&base, m) {
            Ok((changes, worst)) => problems.extend(check_expect(m, &changes, &worst)),
            Err(e) => problems.push(format!("{}: {e:#}", m.id)),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// spec-diff against the compilers' verdicts recorded by the last corpus run, for every
/// mutation whose proof still holds (the specs, generator, consumers and edits it read
/// unchanged): the proof itself, without building anything.
#[test]
fn the_rules_agree_with_the_recorded_compilers() {
    let root = root();
    let base = load::from_dir(&root.join("spec"), "spec/").expect("current specs");
    let record = proven::Proven::load(&root).expect("proven.json");
    let inputs = proven::inputs_digest(&root).expect("digest");
    let own: Vec<(&str, String)> = proven::OWN
        .iter()
        .map(|(c, _)| (*c, proven::own_digest(&root, c).expect("digest")))
        .collect();
    let mut problems = Vec::new();
    let mut held = 0;
    for m in &mutations(&root).expect("mutations") {
        let (_, worst) = judge(&base, m).expect("judged");
        if let Some(proof) = record.current(&inputs, m) {
            held += 1;
            problems.extend(check_proof(m, &worst, proof));
        }
        let singles: Vec<(&str, Option<&proven::Single>)> = own
            .iter()
            .map(|(c, d)| (*c, record.own_current(c, d, m)))
            .collect();
        held += singles.iter().filter(|(_, s)| s.is_some()).count();
        problems.extend(check_own(m, &worst, &singles));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{held} recorded proof(s) hold; the others are proved again by \
         `cargo xtask spec-diff-corpus --stale`"
    );
}

/// spec-diff's two wire verdicts against the documents' own, for every mutation: old
/// requests and new replies against the other side's documents, and the other way round
/// (`wire.rs`). No compiler is needed, so it is proved on every run.
#[test]
fn the_wire_verdicts_agree_with_the_documents() {
    let root = root();
    let base = load::from_dir(&root.join("spec"), "spec/").expect("current specs");
    let all = mutations(&root).expect("mutations");
    let mut problems = Vec::new();
    let mut differ = [0, 0];
    for m in &all {
        let (_, worst) = judge(&base, m).expect("judged");
        match wire::prove(&base, m) {
            Ok(proof) => {
                eprintln!(
                    "{}: old clients {:?}, new clients {:?} {:?}",
                    m.id, proof.old_clients, proof.new_clients, proof.why
                );
                problems.extend(wire::check(m, &worst, &proof));
            }
            Err(e) => problems.push(format!("{e:#}")),
        }
        match (worst.wire_old_clients, worst.wire_new_clients) {
            (Verdict::Breaking, Verdict::Compatible) => differ[0] += 1,
            (Verdict::Compatible, Verdict::Breaking) => differ[1] += 1,
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The corpus holds cases where only old clients break and where only new ones do.
    assert!(differ[0] > 0 && differ[1] > 0, "{differ:?}");
}

/// A record written before Java and Go were proved reads, with no proof of theirs; one
/// recorded on other inputs, or for other edits, holds for nothing.
#[test]
fn java_and_go_are_recorded_on_their_own_inputs() {
    let old: proven::Proven = serde_json::from_str(
        r#"{"inputs": "a", "mutations": {"m": {"edits": "e", "rust": "breaking",
            "typescript": "compatible", "python": "compatible"}}}"#,
    )
    .expect("a record without java and go");
    assert!(old.own.is_empty());
    let m = Mutation {
        id: "m".into(),
        title: "m".into(),
        edits: vec![],
        expect: Default::default(),
        changes: None,
        old_samples: vec![],
        new_samples: vec![],
        wire: Default::default(),
    };
    let mut record = old;
    let single = proven::Single {
        edits: proven::edits_digest(&m),
        verdict: Verdict::Breaking,
        why: Some("javac".into()),
    };
    record.record_own("java", "j1", &m, single.clone());
    assert_eq!(record.own_current("java", "j1", &m), Some(&single));
    assert_eq!(record.own_current("java", "j2", &m), None);
    assert_eq!(record.own_current("go", "j1", &m), None);
    // The SDK's record is untouched by it.
    assert_eq!(record.inputs, "a");
    // New inputs drop the proofs of the old ones.
    let other = Mutation {
        id: "n".into(),
        ..m
    };
    record.record_own("java", "j2", &other, single);
    assert_eq!(record.own["java"].mutations.len(), 1);
    let worst = Verdicts::NONE;
    let singles = [("java", record.own_current("java", "j2", &other))];
    assert_eq!(check_own(&other, &worst, &singles).len(), 1);
}

#[test]
fn a_semver_break_must_be_a_rust_break() {
    let m = Mutation {
        id: "m".into(),
        title: "m".into(),
        edits: vec![],
        expect: Default::default(),
        changes: None,
        old_samples: vec![],
        new_samples: vec![],
        wire: Default::default(),
    };
    let worst = Verdicts::NONE;
    let proof = proven::Proof {
        edits: proven::edits_digest(&m),
        rust: Verdict::Compatible,
        typescript: Verdict::Compatible,
        python: Verdict::Compatible,
        semver: Some(Verdict::Breaking),
        why: Default::default(),
    };
    assert_eq!(check_proof(&m, &worst, &proof).len(), 1);
    // A break only the compiler or a run sees (say a call now refused) is allowed.
    let proof = proven::Proof {
        semver: Some(Verdict::Compatible),
        rust: Verdict::Breaking,
        ..proof
    };
    let worst = Verdicts {
        rust: Verdict::Breaking,
        ..Verdicts::NONE
    };
    assert!(check_proof(&m, &worst, &proof).is_empty());
}

#[test]
fn the_current_specs_against_themselves_change_nothing() {
    let root = root();
    let base = load::from_dir(&root.join("spec"), "spec/").expect("current specs");
    // Re-serialized, as every mutation is: the YAML round trip alone is no change.
    let same = Mutation {
        id: "none".into(),
        title: "none".into(),
        edits: vec![],
        expect: Default::default(),
        changes: None,
        old_samples: vec![],
        new_samples: vec![],
        wire: Default::default(),
    };
    let head = load::parse("same", apply(&base, &same).unwrap()).unwrap();
    assert!(licensing_spec_diff::changes(&base, &head).is_empty());
    let text = licensing_spec::to_yaml(&licensing_spec::raw(&base.specs[0].text).unwrap()).unwrap();
    let texts = vec![
        ("order", "order.yaml".to_string(), text),
        (
            "member",
            "member.yaml".to_string(),
            base.specs[1].text.clone(),
        ),
    ];
    let reserialized = load::parse("yaml", texts).unwrap();
    assert!(licensing_spec_diff::changes(&base, &reserialized).is_empty());
}

#[test]
fn edits_follow_json_pointer() {
    let mut doc = serde_json::json!({"a": {"b/c": [1, 2]}, "r": {"$ref": "#/x"}});
    let e = |op: &str, path: &str, value: Option<Value>| Edit {
        spec: "order".into(),
        op: op.into(),
        path: path.into(),
        from: None,
        to: None,
        value,
    };
    edit(&mut doc, &e("add", "/a/b~1c/-", Some(3.into()))).unwrap();
    edit(&mut doc, &e("remove", "/a/b~1c/0", None)).unwrap();
    edit(&mut doc, &e("replace", "/a/b~1c/0", Some(9.into()))).unwrap();
    assert_eq!(doc["a"]["b/c"], serde_json::json!([9, 3]));
    assert!(edit(&mut doc, &e("remove", "/a/nothing", None)).is_err());
    let r = Edit {
        from: Some("#/x".into()),
        to: Some("#/y".into()),
        ..e("ref", "", None)
    };
    edit(&mut doc, &r).unwrap();
    assert_eq!(doc["r"]["$ref"], "#/y");
}
