//! The generated surface: every operation's call site type-checks with its reply's
//! `data` type, that type is the one the table names, the table is the specs', and the
//! formatted generated code is locked by snapshots.

use std::collections::BTreeSet;

use licensing_sdk::operations::{self, Operation};
use serde_json::Value;

use crate::common::*;

/// For every entry of the table: a function (never run) whose compiling proves the
/// operation is callable through its builder and awaits to its reply's `data`, and the
/// name of that `data` type as the compiler sees it.
macro_rules! every_operation {
    ($( ($service:ident, $builder:ident, $function:ident, $method:ident, $path:literal,
         $reply:ty, $record:path); )*) => {
        mod awaits {
            use licensing_sdk::{Error, runtime::Envelope};
            $(
                pub async fn $function(
                    client: &licensing_sdk::$service::Client,
                ) -> Result<<$reply as Envelope>::Data, Error> {
                    let builder: licensing_sdk::$service::builder::$builder<'_> =
                        client.$function();
                    builder.await
                }
            )*
        }

        #[test]
        fn every_operation_type_checks() {
            // Referencing the functions makes the compiler check them; nothing is sent.
            $( let _ = awaits::$function; )*
        }

        /// Each record with the name of its reply's `data` type.
        fn data_types() -> Vec<(&'static Operation, &'static str)> {
            vec![$((
                &$record,
                std::any::type_name::<<$reply as licensing_sdk::runtime::Envelope>::Data>(),
            )),*]
        }
    };
}

licensing_sdk::for_each_operation!(every_operation);

/// The table's `data_type` of every operation is the type its call resolves to.
#[test]
fn every_operation_resolves_to_the_tables_data_type() {
    let checked = data_types();
    assert_eq!(checked.len(), operations::ALL.len());
    for (op, name) in checked {
        assert_eq!(table_spelling(name), op.data_type, "{}", op.id);
    }
}

fn codes(list: &Value) -> BTreeSet<&str> {
    list.as_array()
        .map(|codes| {
            codes
                .iter()
                .map(|c| c.as_str().expect("an error code is a string"))
                .collect()
        })
        .unwrap_or_default()
}

/// The table holds every operation the specs give, with their method, path, `x-idempotent`,
/// `x-partial-success-code` and error codes, read here from the YAML on its own.
#[test]
fn the_table_is_the_specs() {
    let mut seen = Vec::new();
    for service in ["order", "member"] {
        let spec = spec(service);
        let shared = codes(&spec["x-error-codes"]);
        for (path, item) in spec["paths"].as_object().expect("paths") {
            for (method, documented) in item.as_object().expect("path item") {
                let Some(id) = documented["operationId"].as_str() else {
                    continue;
                };
                let op = operations::find(id).unwrap_or_else(|| panic!("{id} is not in the table"));
                assert_eq!(service_of(op), service, "{id}");
                assert_eq!(op.method.as_str(), method.to_uppercase(), "{id}");
                assert_eq!(op.path, path, "{id}");
                assert_eq!(
                    Some(op.idempotent),
                    documented["x-idempotent"].as_bool(),
                    "{id}: x-idempotent"
                );
                assert_eq!(
                    op.partial_success_code,
                    documented["x-partial-success-code"].as_str(),
                    "{id}: x-partial-success-code"
                );
                let expected: BTreeSet<&str> = shared
                    .union(&codes(&documented["x-error-codes"]))
                    .copied()
                    .collect();
                assert_eq!(
                    op.error_codes.iter().copied().collect::<BTreeSet<_>>(),
                    expected,
                    "{id}: error codes"
                );
                seen.push(id);
            }
        }
    }
    seen.sort_unstable();
    let mut table: Vec<&str> = operations::ALL.iter().map(|op| op.id).collect();
    table.sort_unstable();
    assert_eq!(seen, table, "the table holds exactly the specs' operations");
}

#[test]
fn generated_order_client() {
    insta::assert_snapshot!(
        "order_client",
        include_str!(concat!(env!("OUT_DIR"), "/order.rs"))
    );
}

#[test]
fn generated_member_client() {
    insta::assert_snapshot!(
        "member_client",
        include_str!(concat!(env!("OUT_DIR"), "/member.rs"))
    );
}

#[test]
fn generated_enums() {
    insta::assert_snapshot!("enums", include_str!(concat!(env!("OUT_DIR"), "/enums.rs")));
}

/// The rules `validate.rs` checks by hand must be the spec's, not a copy that drifts.
#[test]
fn hand_checked_bounds_match_the_spec() {
    let user_list =
        &spec("member")["components"]["schemas"]["AddMembersRequest"]["properties"]["userList"];
    let bounds = licensing_sdk::validate::MEMBERS_PER_CALL;
    assert_eq!(user_list["minItems"].as_u64(), Some(*bounds.start() as u64));
    assert_eq!(user_list["maxItems"].as_u64(), Some(*bounds.end() as u64));
}
