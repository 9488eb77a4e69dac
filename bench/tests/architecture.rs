//! The lab's sources by the house's rules: no file too long to read at once, no function
//! over 150 lines, and no files that import each other.

use std::path::{Path, PathBuf};

use licensing_test_support::{functions, layers};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_is_too_long_and_no_function_either() {
    let long = layers::too_long(&src(), 600);
    assert!(long.is_empty(), "over 600 lines:\n{}", long.join("\n"));
    let long: Vec<String> = functions::long_functions(&src(), 150)
        .into_iter()
        .map(|f| format!("{}:{} {} ({} lines)", f.file, f.line, f.name, f.lines))
        .collect();
    assert!(
        long.is_empty(),
        "functions over 150 lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_files_import_each_other() {
    let files = layers::sources(&src());
    assert!(files.len() > 20, "the sources were not found");
    let found = layers::module_cycles(&files);
    assert!(
        found.is_empty(),
        "files that import each other (move what they share, or lean on a third):\n{}",
        found.join("\n")
    );
}
