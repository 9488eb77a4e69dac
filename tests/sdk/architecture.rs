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

/// Every other package of the workspace that has no architecture test of its own (the
/// simulator's and the proxy's check their layers too).
const PACKAGES: [&str; 7] = [
    "spec-model",
    "codegen",
    "sandbox-client",
    "cli",
    "xtask",
    "bench-load",
    "test-support",
];

#[test]
fn no_package_has_files_that_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for package in PACKAGES {
        let files = layers::sources(&root.join(package).join("src"));
        assert!(!files.is_empty(), "{package}: the sources were not found");
        found.extend(
            layers::module_cycles(&files)
                .into_iter()
                .map(|c| format!("{package}: {c}")),
        );
    }
    assert!(
        found.is_empty(),
        "files that import each other (move what they share, or lean on a third):\n{}",
        found.join("\n")
    );
}
