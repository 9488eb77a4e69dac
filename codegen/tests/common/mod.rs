//! What both tests of the generators read: the specs, and the two services made of them.

use licensing_codegen::Service;

/// `spec/{name}.yaml`'s text.
pub fn spec(name: &str) -> String {
    let file = format!("{}/../spec/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The order service and the member center of these texts, named by the real specs' files.
pub fn services<'a>(order: &'a str, member: &'a str) -> [Service<'a>; 2] {
    [
        Service {
            name: "order",
            file: "spec/order.yaml",
            text: order,
        },
        Service {
            name: "member",
            file: "spec/member.yaml",
            text: member,
        },
    ]
}
