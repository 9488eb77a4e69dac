//! Locks the exported JSON Schemas (`schemas/`, written by `cargo xtask export-schemas`
//! from `spec/*.yaml`): a spec change that changes what other languages see shows up as
//! a snapshot diff to review (`cargo insta review`).
//!
//! That `schemas/` matches the specs is `cargo xtask export-schemas --check`'s job; this
//! test reads the committed files.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use serde_json::Value;

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The schema files below `schemas/<service>/`, as `<service>/<Name>.json`, sorted.
fn files_on_disk(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for service in fs::read_dir(dir).expect("schemas/ exists") {
        let service = service.unwrap();
        if !service.file_type().unwrap().is_dir() {
            continue;
        }
        for file in fs::read_dir(service.path()).unwrap() {
            let name = file.unwrap().file_name().into_string().unwrap();
            files.push(format!(
                "{}/{name}",
                service.file_name().into_string().unwrap()
            ));
        }
    }
    files.sort();
    files
}

#[test]
fn exported_schemas_are_locked() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let index_text = read(&dir.join("index.json"));
    let index: Value = serde_json::from_str(&index_text).expect("index.json is JSON");
    let entries = index["schemas"]
        .as_array()
        .expect("index.json lists `schemas`");

    let mut listed: Vec<String> = entries
        .iter()
        .map(|e| {
            e["file"]
                .as_str()
                .expect("each entry names its file")
                .to_owned()
        })
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        files_on_disk(&dir),
        "index.json and schemas/*/ disagree"
    );

    // Every operation's schemas are files of the index, each operation listed once.
    let operations = index["operations"]
        .as_array()
        .expect("index.json lists `operations`");
    let mut ids = std::collections::BTreeSet::new();
    for op in operations {
        let id = op["operationId"].as_str().expect("an operationId");
        assert!(ids.insert(id), "{id}: listed twice in index.json");
        let reply = op["reply"].as_str().expect("a reply schema");
        assert!(
            listed.iter().any(|f| f == reply),
            "{id}: {reply} not in the index"
        );
        if let Some(request) = op["request"].as_str() {
            assert!(
                listed.iter().any(|f| f == request),
                "{id}: {request} not in the index"
            );
        }
    }
    assert!(
        ids.contains("batchOrder") && ids.contains("listMembers"),
        "both services' operations are listed: {ids:?}"
    );

    // Check every snapshot before failing, so that one run shows every change.
    let mut changed = Vec::new();
    let mut snapshot = |name: String, text: String| {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            insta::assert_snapshot!(name.clone(), text)
        }));
        if outcome.is_err() {
            changed.push(name);
        }
    };
    snapshot("index".to_owned(), index_text.clone());
    for entry in entries {
        let (service, name) = (
            entry["service"].as_str().unwrap(),
            entry["name"].as_str().unwrap(),
        );
        let text = read(&dir.join(entry["file"].as_str().unwrap()));
        let schema: Value = serde_json::from_str(&text).expect("a schema file is JSON");
        assert_eq!(
            schema["$id"], entry["$id"],
            "{service}/{name}: `$id` differs from index.json"
        );
        assert_eq!(
            schema["title"], name,
            "{service}/{name}: `title` is not the schema name"
        );
        snapshot(format!("{service}__{name}"), text);
    }
    assert!(changed.is_empty(), "changed schema snapshots: {changed:?}");
}
