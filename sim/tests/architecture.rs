//! The simulator's layers depend one way: protocol → ops → state, ops → store, and the
//! sandbox plugged into the protocol layer through its hooks; the console beside the
//! sandbox. The server they are served on (the accept loop, the admin checks, the
//! console's frame) is a package of its own, `licensing-host`, below every layer.
//! This reads every `use` (and every `crate::…` path) in `sim/src` and fails, naming the
//! file and the import, on an arrow the table below does not allow; on files that import
//! each other (in a circle, however long); and on a file too long to read at once.

use std::path::{Path, PathBuf};

use licensing_test_support::{
    architecture::{assert_findings, file},
    layer_tests,
    layers::{Table, module_cycles},
};

/// The package's sources, `sim/src`.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// What each layer (a top-level folder of `sim/src`) may import besides itself. The crate
/// root (`lib.rs`, `main.rs`) wires them together and may import any.
const ALLOWED: Table = &[
    // Each tenant is a sandbox of its own, built as the default one is: the layer that
    // builds and routes to them sits above all the others.
    (
        "tenants",
        &["console", "sandbox", "protocol", "ops", "state", "store"],
    ),
    ("console", &["sandbox", "protocol"]),
    ("sandbox", &["protocol", "ops", "state"]),
    ("protocol", &["ops", "state"]),
    ("ops", &["state", "store"]),
    ("state", &[]),
    ("store", &[]),
];

layer_tests!(src: src(), table: ALLOWED, more_than: 20, max_lines: 600);

/// The checker itself: each kind of backward arrow is found and named.
#[test]
fn a_backward_arrow_is_named_with_its_file() {
    let bad = [
        (
            "protocol/gate.rs",
            "use crate::{\n    ops::Call,\n    sandbox::journal::Journal,\n};\n",
            "protocol depend on sandbox",
        ),
        (
            "state/mod.rs",
            "pub(crate) use crate::ops::Db;\n",
            "state depend on ops",
        ),
        (
            "store/mod.rs",
            "fn f() { crate::state::State::default(); }\n",
            "store depend on state",
        ),
        (
            "ops/order/batch.rs",
            "use super::super::super::protocol::Gate;\n",
            "ops depend on protocol",
        ),
        (
            "console/state.rs",
            "use crate::Simulator;\n",
            "console depend on the crate root",
        ),
        (
            "sandbox/api.rs",
            "use crate::console::pages;\n",
            "sandbox depend on console",
        ),
    ];
    let good = [
        (
            "protocol/gate.rs",
            "use crate::ops::{self, Call};\nuse super::hooks::Exchange;\n",
        ),
        ("ops/order/check.rs", "use super::*;\n"),
        ("sandbox/mod.rs", "// use crate::console::pages;\n"),
        ("protocol/mod.rs", "use licensing_host::server::ReadBody;\n"),
    ];
    let found = assert_findings(ALLOWED, &bad, &good);
    assert!(found[0].starts_with("protocol/gate.rs: `use crate::{ops::Call,sandbox::journal::Journal,}` makes protocol depend on sandbox"), "{}", found[0]);
}

/// The checker of circles: two files that import each other, and three in a ring, are
/// named file by file; a child using its parent module's items is not a circle.
#[test]
fn a_circle_between_files_is_named() {
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
