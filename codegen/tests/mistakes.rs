//! The generator run on the real specs, and on copies with one deliberate mistake each:
//! the build must stop with one line naming the file and the operation.

use licensing_codegen::generate;

mod common;
use common::{services, spec};

/// Generates both services, with `edit` applied to the member center's spec.
fn generate_with(edit: impl Fn(String) -> String) -> Result<Vec<(String, String)>, String> {
    let (order, member) = (spec("order"), edit(spec("member")));
    generate(&services(&order, &member)).map_err(|e| e.to_string())
}

/// Replaces exactly one occurrence, so a test cannot pass because its edit missed.
fn replace_once(text: String, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` must occur once");
    text.replacen(from, to, 1)
}

#[test]
fn the_real_specs_generate_every_file() {
    let files = generate_with(|s| s).unwrap();
    let names: Vec<_> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["enums", "order", "member", "operations"]);
    let table = &files[3].1;
    assert_eq!(
        table.matches("pub static ").count(),
        19 + 1,
        "19 records + ALL"
    );
    for (_, code) in &files {
        syn::parse_file(code).expect("generated code parses");
    }
}

#[test]
fn an_operation_without_an_operation_id() {
    let error = generate_with(|s| replace_once(s, "      operationId: listMembers\n", ""));
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: GET /me/api/v1/enterprise/{enterpriseGlobalId}/members: no operationId"
    );
}

#[test]
fn x_pagination_naming_a_missing_field() {
    let error =
        generate_with(|s| replace_once(s, "        items: list\n", "        items: rows\n"));
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: listMembers: x-pagination.items: page schema `MemberPage` has no `rows`"
    );
}

#[test]
fn an_undocumented_error_code() {
    let error = generate_with(|s| {
        replace_once(
            s,
            "      x-error-codes: ['60017', '60024']\n",
            "      x-error-codes: ['60017', '13004']\n",
        )
    });
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: listAssetProducts: x-error-codes: `13004` is not a value of the \
         `ErrorCode` schema"
    );
}

#[test]
fn an_operation_without_x_idempotent() {
    let error = generate_with(|s| {
        let at = s.find("operationId: listMembers").unwrap();
        let (head, tail) = s.split_at(at);
        let tail = tail.replacen("      x-idempotent: true\n", "", 1);
        format!("{head}{tail}")
    });
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: listMembers: `x-idempotent: true|false` is required (retry \
         classification)"
    );
}

#[test]
fn a_yaml_error_is_one_line() {
    let error = generate_with(|s| replace_once(s, "paths:\n", "paths: [\n")).unwrap_err();
    assert!(
        error.starts_with("spec/member.yaml: not a valid OpenAPI 3.0 document:"),
        "{error}"
    );
    assert!(!error.contains('\n'), "{error}");
}
