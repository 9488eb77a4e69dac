//! The checks each package's `tests/architecture.rs` runs on its own `src`, written once:
//! [`layer_tests!`](crate::layer_tests) and [`source_tests!`](crate::source_tests) write
//! them as that file's own tests (so each package still names them in its test list),
//! and the assertions below say what was found the same way in every package.

use std::path::{Path, PathBuf};

use crate::layers;

/// Fails, naming each finding on a line of its own under `heading`, unless there are none.
#[track_caller]
pub fn assert_none(heading: &str, found: &[String]) {
    assert!(found.is_empty(), "{heading}:\n{}", found.join("\n"));
}

/// The `.rs` files under `src`, failing unless there are more than `more_than`: a check of
/// no files passes for the wrong reason.
#[track_caller]
pub fn sources_found(src: &Path, more_than: usize) -> Vec<(PathBuf, String)> {
    let files = layers::sources(src);
    assert!(files.len() > more_than, "the sources were not found");
    files
}

/// Fails naming the files that import each other (in a circle, however long).
#[track_caller]
pub fn assert_no_files_import_each_other(files: &[(PathBuf, String)]) {
    assert_none(
        "files that import each other (move what they share, or lean on a third)",
        &layers::module_cycles(files),
    );
}

/// Fails naming the files under `src` over `max` lines.
#[track_caller]
pub fn assert_no_file_too_long(src: &Path, max: usize) {
    assert_none(&format!("over {max} lines"), &layers::too_long(src, max));
}

/// A source file for the checker's own tests: its path below `src` and its text.
pub fn file(path: &str, text: &str) -> (PathBuf, String) {
    (PathBuf::from(path), text.to_string())
}

/// The layer check of `table` on planted files: each of `bad` (`path`, `text`, a part of
/// what its finding must say) is named, in order, and none of `good` (`path`, `text`) is.
/// The findings, for a caller that checks more of their wording.
#[track_caller]
pub fn assert_findings(
    table: layers::Table,
    bad: &[(&str, &str, &str)],
    good: &[(&str, &str)],
) -> Vec<String> {
    let files: Vec<_> = bad.iter().map(|(path, text, _)| file(path, text)).collect();
    let found = layers::violations(table, &files);
    assert_eq!(found.len(), bad.len(), "{found:#?}");
    for (finding, (_, _, expected)) in found.iter().zip(bad) {
        assert!(finding.contains(expected), "{finding}");
    }
    let good: Vec<_> = good.iter().map(|(path, text)| file(path, text)).collect();
    assert_eq!(layers::violations(table, &good), Vec::<String>::new());
    found
}

/// The two tests every package's sources pass: `no_files_import_each_other` (among more
/// than `more_than` files found under `src`) and `no_file_is_too_long` (`max_lines`).
#[macro_export]
macro_rules! source_tests {
    (src: $src:expr, more_than: $files:expr, max_lines: $max:expr $(,)?) => {
        #[test]
        fn no_files_import_each_other() {
            $crate::architecture::assert_no_files_import_each_other(
                &$crate::architecture::sources_found(&$src, $files),
            );
        }

        #[test]
        fn no_file_is_too_long() {
            $crate::architecture::assert_no_file_too_long(&$src, $max);
        }
    };
}

/// The tests of a package with a layer table: those of
/// [`source_tests!`](crate::source_tests), `every_import_follows_the_layers` of `table`,
/// and `the_layer_table_has_no_circle`.
#[macro_export]
macro_rules! layer_tests {
    (src: $src:expr, table: $table:expr, more_than: $files:expr, max_lines: $max:expr $(,)?) => {
        $crate::source_tests!(src: $src, more_than: $files, max_lines: $max);

        #[test]
        fn every_import_follows_the_layers() {
            let files = $crate::architecture::sources_found(&$src, $files);
            $crate::architecture::assert_none(
                "arrows against the layers",
                &$crate::layers::violations($table, &files),
            );
        }

        #[test]
        fn the_layer_table_has_no_circle() {
            let found = $crate::layers::circles($table);
            assert!(
                found.is_empty(),
                "{found:?} depend on themselves through the table"
            );
        }
    };
}
