//! The simulator's layers depend one way: protocol → ops → state, ops → store, and the
//! sandbox plugged into the protocol layer through its hooks; the console beside the
//! sandbox. The server they are served on (the accept loop, the admin checks, the
//! console's frame) is a package of its own, `licensing-host`, below every layer.
//! This reads every `use` (and every `crate::…` path) in `sim/src` and fails, naming the
//! file and the import, on an arrow the table below does not allow; on files that import
//! each other (in a circle, however long); and on a file too long to read at once.

use std::path::{Path, PathBuf};

use licensing_test_support::layers::{self, Table, circles, module_cycles};

/// The package's sources, `sim/src`.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn sources() -> Vec<(PathBuf, String)> {
    layers::sources(&src())
}

/// What each layer (a top-level folder of `sim/src`) may import besides itself. The crate
/// root (`lib.rs`, `main.rs`) wires them together and may import any.
const ALLOWED: Table = &[
    ("console", &["sandbox", "protocol"]),
    ("sandbox", &["protocol", "ops", "state"]),
    ("protocol", &["ops", "state"]),
    ("ops", &["state", "store"]),
    ("state", &[]),
    ("store", &[]),
];

/// The longest a source file may be.
const MAX_LINES: usize = 600;

fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    layers::violations(ALLOWED, files)
}

#[test]
fn every_import_follows_the_layers() {
    let files = sources();
    assert!(files.len() > 20, "the sources were not found");
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

/// The checker itself: each kind of backward arrow is found and named.
#[test]
fn a_backward_arrow_is_named_with_its_file() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_string());
    let bad = [
        file(
            "protocol/gate.rs",
            "use crate::{\n    ops::Call,\n    sandbox::journal::Journal,\n};\n",
        ),
        file("state/mod.rs", "pub(crate) use crate::ops::Db;\n"),
        file(
            "store/mod.rs",
            "fn f() { crate::state::State::default(); }\n",
        ),
        file(
            "ops/order/batch.rs",
            "use super::super::super::protocol::Gate;\n",
        ),
        file("console/state.rs", "use crate::Simulator;\n"),
        file("sandbox/api.rs", "use crate::console::pages;\n"),
    ];
    let found = violations(&bad);
    assert_eq!(found.len(), bad.len(), "{found:#?}");
    assert!(found[0].starts_with("protocol/gate.rs: `use crate::{ops::Call,sandbox::journal::Journal,}` makes protocol depend on sandbox"), "{}", found[0]);
    assert!(found[1].contains("state depend on ops"), "{}", found[1]);
    assert!(found[2].contains("store depend on state"), "{}", found[2]);
    assert!(found[3].contains("ops depend on protocol"), "{}", found[3]);
    assert!(
        found[4].contains("console depend on the crate root"),
        "{}",
        found[4]
    );
    assert!(
        found[5].contains("sandbox depend on console"),
        "{}",
        found[5]
    );
    let good = [
        file(
            "protocol/gate.rs",
            "use crate::ops::{self, Call};\nuse super::hooks::Exchange;\n",
        ),
        file("ops/order/check.rs", "use super::*;\n"),
        file("sandbox/mod.rs", "// use crate::console::pages;\n"),
        file("protocol/mod.rs", "use licensing_host::server::ReadBody;\n"),
    ];
    assert_eq!(violations(&good), Vec::<String>::new());
}

/// The checker of circles: two files that import each other, and three in a ring, are
/// named file by file; a child using its parent module's items is not a circle.
#[test]
fn a_circle_between_files_is_named() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_string());
    let files = [
        file(
            "protocol/mod.rs",
            "mod admin;\nmod session;\nuse admin::Guard;\n",
        ),
        file(
            "protocol/admin.rs",
            "use super::{admin_error, session::{self, Sessions}};\n",
        ),
        file(
            "protocol/session.rs",
            "fn f() { super::admin::constant_time_eq(a, b); }\n",
        ),
        file("ops/a.rs", "use crate::ops::b::B;\n"),
        file("ops/b.rs", "use super::c::{self, C};\n"),
        file("ops/c.rs", "pub fn c() { crate::ops::a::f(); }\n"),
        file("ops/mod.rs", "pub(crate) use a::A;\n"),
        file("state/mod.rs", "use crate::ops::a::A as Alias;\n"),
    ];
    assert_eq!(
        module_cycles(&files),
        [
            "ops/a.rs → ops/b.rs → ops/c.rs → ops/a.rs",
            "protocol/admin.rs → protocol/session.rs → protocol/admin.rs",
        ]
    );
    let tree = [
        file("protocol/mod.rs", "pub(crate) use gate::gate;\n"),
        file("protocol/gate.rs", "use super::{Answer, reply::Reply};\n"),
        file("protocol/reply.rs", "use super::*;\n// use super::gate;\n"),
    ];
    assert_eq!(module_cycles(&tree), Vec::<String>::new());
}
