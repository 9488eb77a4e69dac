//! The gate's sources and its corpus's by the house's rules: no file too long to read at
//! once, no function over 150 lines, and no files that import each other.

use std::path::{Path, PathBuf};

use licensing_test_support::{functions, layers};

/// The published library and binary, and the corpus (an example of its own).
fn roots() -> [PathBuf; 2] {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    [package.join("src"), package.join("corpus")]
}

#[test]
fn no_file_is_too_long_and_no_function_either() {
    for root in roots() {
        let long = layers::too_long(&root, 600);
        assert!(long.is_empty(), "over 600 lines:\n{}", long.join("\n"));
        let long: Vec<String> = functions::long_functions(&root, 150)
            .into_iter()
            .map(|f| format!("{}:{} {} ({} lines)", f.file, f.line, f.name, f.lines))
            .collect();
        assert!(
            long.is_empty(),
            "functions over 150 lines in {}:\n{}",
            root.display(),
            long.join("\n")
        );
    }
}

#[test]
fn no_files_import_each_other() {
    for root in roots() {
        let files = layers::sources(&root);
        assert!(
            files.len() > 5,
            "{}: the sources were not found",
            root.display()
        );
        let found = layers::module_cycles(&files);
        assert!(
            found.is_empty(),
            "files that import each other (move what they share, or lean on a third):\n{}",
            found.join("\n")
        );
    }
}
