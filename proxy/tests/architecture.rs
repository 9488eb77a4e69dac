//! The proxy's layers depend one way: the findings' format (`conformance`) at the bottom;
//! the checks against the documents (`check`) and the console page on it; forwarding
//! (`forward`: the upstream client, the recording and its admin routes) on those; the
//! tools that read recordings (`tools`) beside it. This reads every `use` (and every
//! `crate::…` path) in `proxy/src` and fails, naming the file and the import, on an arrow
//! the table below does not allow; on files that import each other (in a circle, however
//! long); and on a file too long to read at once.

use std::path::{Path, PathBuf};

use licensing_test_support::layers::{self, Table, circles, module_cycles};

/// The package's sources, `proxy/src`.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn sources() -> Vec<(PathBuf, String)> {
    layers::sources(&src())
}

/// What each layer (a top-level folder of `proxy/src`) may import besides itself. The
/// crate root (`lib.rs`, `main.rs`) wires them together and may import any.
const ALLOWED: Table = &[
    ("forward", &["check", "console", "conformance"]),
    ("tools", &["check", "conformance"]),
    ("console", &["conformance"]),
    ("check", &["conformance"]),
    ("conformance", &[]),
];

/// The longest a source file may be.
const MAX_LINES: usize = 600;

fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    layers::violations(ALLOWED, files)
}

#[test]
fn every_import_follows_the_layers() {
    let files = sources();
    assert!(files.len() > 10, "the sources were not found");
    let found = violations(&files);
    assert!(
        found.is_empty(),
        "arrows against the layers:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_layer_table_has_no_circle() {
    let found = circles(ALLOWED);
    assert!(
        found.is_empty(),
        "{found:?} depend on themselves through the table"
    );
}

#[test]
fn no_files_import_each_other() {
    let found = module_cycles(&sources());
    assert!(
        found.is_empty(),
        "files that import each other (move what they share, or lean on a third):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_file_is_too_long() {
    let long = layers::too_long(&src(), MAX_LINES);
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The checker on this table: a backward arrow is named with its file; the server layer's
/// crate is a dependency, not a layer.
#[test]
fn a_backward_arrow_is_named_with_its_file() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_string());
    let bad = [
        file("conformance/mod.rs", "use crate::check::schema::Finding;\n"),
        file("check/schema.rs", "use crate::forward::har::Recording;\n"),
        file("console/mod.rs", "fn f() { crate::tools::report(p); }\n"),
        file("tools/replay.rs", "use crate::Proxy;\n"),
        file("stray/mod.rs", "\n"),
    ];
    let found = violations(&bad);
    assert_eq!(found.len(), bad.len(), "{found:#?}");
    assert!(
        found[0].contains("conformance depend on check"),
        "{}",
        found[0]
    );
    assert!(found[1].contains("check depend on forward"), "{}", found[1]);
    assert!(found[2].contains("console depend on tools"), "{}", found[2]);
    assert!(
        found[3].contains("tools depend on the crate root"),
        "{}",
        found[3]
    );
    assert!(found[4].contains("not in a layer"), "{}", found[4]);
    let good = [
        file(
            "forward/mod.rs",
            "use licensing_host::{AdminChecks, Console};\nuse crate::check::contract::Contract;\n",
        ),
        file("tools/seed.rs", "use super::entries;\n"),
    ];
    assert_eq!(violations(&good), Vec::<String>::new());
}
