//! The server layer's own layers depend one way: the accept loop (`server`) at the bottom,
//! the admin checks (`admin`) on it, the admin pages' router (`pages`) on those, the
//! console's frame (`console`) on the pages, and the API a program is served with
//! (`host`: `Host`, `AdminChecks`, `Console`) on all of them. This reads every `use` (and
//! every `crate::…` path) in `host/src` and fails, naming the file and the import, on an
//! arrow the table below does not allow; on files that import each other (in a circle,
//! however long); and on a file too long to read at once.

use std::path::{Path, PathBuf};

use licensing_test_support::{architecture::assert_findings, layer_tests, layers::Table};

/// The package's sources, `host/src`.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
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

layer_tests!(src: src(), table: ALLOWED, more_than: 15, max_lines: 600);

/// The checker on this table: a backward arrow is named with its file, and the crate root
/// is no layer's to lean on.
#[test]
fn a_backward_arrow_is_named_with_its_file() {
    let bad = [
        (
            "server/conn.rs",
            "use crate::admin::AdminAccess;\n",
            "server depend on admin",
        ),
        (
            "admin/mod.rs",
            "use crate::pages::bare;\n",
            "admin depend on pages",
        ),
        (
            "console/frame.rs",
            "fn f() { crate::host::Host::builder(); }\n",
            "console depend on host",
        ),
        (
            "pages/mod.rs",
            "use crate::REDACTED;\n",
            "pages depend on the crate root",
        ),
    ];
    let good = [
        (
            "host/console.rs",
            "use crate::{console::frame, pages::PageServer};\n",
        ),
        ("console/frame.rs", "use super::layout::{self, secure};\n"),
        ("server/body.rs", "use super::*;\n"),
    ];
    assert_findings(ALLOWED, &bad, &good);
}
