//! The SDK's own sources (`src/`, the thin layer over the generated clients): no file too
//! long to read at once, and no files that import each other (in a circle, however long).

use std::path::{Path, PathBuf};

use licensing_test_support::layers;

/// The longest a source file may be.
const MAX_LINES: usize = 600;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_files_import_each_other() {
    let files = layers::sources(&src());
    assert!(files.len() > 10, "the sources were not found");
    let found = layers::module_cycles(&files);
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
