//! The server layer's own layers depend one way: the accept loop (`server`) at the bottom,
//! the admin checks (`admin`) on it, the admin pages' router (`pages`) on those, the
//! console's frame (`console`) on the pages, and the API a program is served with
//! (`host`: `Host`, `AdminChecks`, `Console`) on all of them. This reads every `use` (and
//! every `crate::…` path) in `host/src` and fails, naming the file and the import, on an
//! arrow the table below does not allow; on files that import each other (in a circle,
//! however long); and on a file too long to read at once.

use std::path::{Path, PathBuf};

use licensing_test_support::layers::{self, Table, circles, module_cycles};

/// The package's sources, `host/src`.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn sources() -> Vec<(PathBuf, String)> {
    layers::sources(&src())
}

/// What each layer (a top-level folder of `host/src`) may import besides itself. The crate
/// root (`lib.rs`, `secret.rs`) re-exports them and may import any.
const ALLOWED: Table = &[
    ("host", &["console", "pages", "admin", "server"]),
    ("console", &["pages", "admin"]),
    ("pages", &["admin", "server"]),
    ("admin", &["server"]),
    ("server", &[]),
];

/// The longest a source file may be.
const MAX_LINES: usize = 600;

fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    layers::violations(ALLOWED, files)
}

#[test]
fn every_import_follows_the_layers() {
    let files = sources();
    assert!(files.len() > 15, "the sources were not found");
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

/// The checker on this table: a backward arrow is named with its file, and the crate root
/// is no layer's to lean on.
#[test]
fn a_backward_arrow_is_named_with_its_file() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_string());
    let bad = [
        file("server/conn.rs", "use crate::admin::AdminAccess;\n"),
        file("admin/mod.rs", "use crate::pages::bare;\n"),
        file(
            "console/frame.rs",
            "fn f() { crate::host::Host::builder(); }\n",
        ),
        file("pages/mod.rs", "use crate::REDACTED;\n"),
    ];
    let found = violations(&bad);
    assert_eq!(found.len(), bad.len(), "{found:#?}");
    assert!(found[0].contains("server depend on admin"), "{}", found[0]);
    assert!(found[1].contains("admin depend on pages"), "{}", found[1]);
    assert!(found[2].contains("console depend on host"), "{}", found[2]);
    assert!(
        found[3].contains("pages depend on the crate root"),
        "{}",
        found[3]
    );
    let good = [
        file(
            "host/console.rs",
            "use crate::{console::frame, pages::PageServer};\n",
        ),
        file("console/frame.rs", "use super::layout::{self, secure};\n"),
        file("server/body.rs", "use super::*;\n"),
    ];
    assert_eq!(violations(&good), Vec::<String>::new());
}
