//! The proxy's layers depend one way: the findings' format (`conformance`) at the bottom;
//! the checks against the documents (`check`) and the console page on it; forwarding
//! (`forward`: the upstream client, the recording and its admin routes) on those; the
//! tools that read recordings (`tools`) beside it. This reads every `use` (and every
//! `crate::…` path) in `proxy/src` and fails, naming the file and the import, on an arrow
//! the table below does not allow; on files that import each other (in a circle, however
//! long); and on a file too long to read at once.

use std::path::{Path, PathBuf};

use licensing_test_support::{architecture::assert_findings, layer_tests, layers::Table};

/// The package's sources, `proxy/src`.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
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

layer_tests!(src: src(), table: ALLOWED, more_than: 10, max_lines: 600);

/// The checker on this table: a backward arrow is named with its file; the server layer's
/// crate is a dependency, not a layer.
#[test]
fn a_backward_arrow_is_named_with_its_file() {
    let bad = [
        (
            "conformance/mod.rs",
            "use crate::check::schema::Finding;\n",
            "conformance depend on check",
        ),
        (
            "check/schema.rs",
            "use crate::forward::har::Recording;\n",
            "check depend on forward",
        ),
        (
            "console/mod.rs",
            "fn f() { crate::tools::report(p); }\n",
            "console depend on tools",
        ),
        (
            "tools/replay.rs",
            "use crate::Proxy;\n",
            "tools depend on the crate root",
        ),
        ("stray/mod.rs", "\n", "not in a layer"),
    ];
    let good = [
        (
            "forward/mod.rs",
            "use licensing_host::{AdminChecks, Console};\nuse crate::check::contract::Contract;\n",
        ),
        ("tools/seed.rs", "use super::entries;\n"),
    ];
    assert_findings(ALLOWED, &bad, &good);
}
