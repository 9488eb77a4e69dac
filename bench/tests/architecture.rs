//! The lab's sources by the house's rules: no file too long to read at once, no function
//! over 150 lines, and no files that import each other.

use std::path::{Path, PathBuf};

use licensing_test_support::{
    architecture::{
        assert_no_file_too_long, assert_no_files_import_each_other, assert_none, sources_found,
    },
    functions,
};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_is_too_long_and_no_function_either() {
    assert_no_file_too_long(&src(), 600);
    let long: Vec<String> = functions::long_functions(&src(), 150)
        .into_iter()
        .map(|f| format!("{}:{} {} ({} lines)", f.file, f.line, f.name, f.lines))
        .collect();
    assert_none("functions over 150 lines", &long);
}

#[test]
fn no_files_import_each_other() {
    assert_no_files_import_each_other(&sources_found(&src(), 20));
}
