//! The command line's generator run on the real specs, and on copies with one change
//! each: what a spec adds becomes a flag, and what a flag cannot carry stops the build with
//! one line naming the file and the operation.

use licensing_codegen::cli;

mod common;
use common::{services, spec};

/// The CLI's code for both services, `order` and `member` edited first.
fn generate_with(
    order: impl Fn(String) -> String,
    member: impl Fn(String) -> String,
) -> Result<String, String> {
    let (order, member) = (order(spec("order")), member(spec("member")));
    cli::generate(&services(&order, &member)).map_err(|e| e.to_string())
}

fn same(s: String) -> String {
    s
}

/// Replaces exactly one occurrence, so a test cannot pass because its edit missed.
fn replace_once(text: String, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` must occur once");
    text.replacen(from, to, 1)
}

/// The generated item that starts with `start`, up to the next line at its indentation
/// that closes it.
fn item<'a>(code: &'a str, start: &str) -> &'a str {
    let at = code
        .find(start)
        .unwrap_or_else(|| panic!("no `{start}` in\n{code}"));
    let indent = code[..at].len() - code[..at].trim_end_matches(' ').len();
    let close = format!("\n{}}}", " ".repeat(indent));
    let end = code[at..].find(&close).expect("the item closes") + close.len();
    &code[at..at + end]
}

/// The record of operation `id`.
fn record<'a>(code: &'a str, id: &str) -> &'a str {
    let at = code
        .find(&format!("        id: \"{id}\",\n"))
        .unwrap_or_else(|| panic!("no record of `{id}` in\n{code}"));
    let start = code[..at].rfind("    CliOp {\n").expect("in a record");
    let end = at + code[at..].find("\n    },\n").expect("the record closes");
    &code[start..end]
}

/// Whether `code` has `expected`, whitespace aside: prettyplease decides where lines break.
fn has(code: &str, expected: &str) -> bool {
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    squeeze(code).contains(&squeeze(expected))
}

#[test]
fn the_real_specs_give_one_record_and_one_arm_per_operation() {
    let code = generate_with(same, same).unwrap();
    syn::parse_file(&code).expect("the generated code parses");
    assert_eq!(code.matches("    CliOp {\n").count(), 19, "{code}");
    assert_eq!(code.matches("let mut call = client.").count(), 19, "{code}");
    // The paged operation: its record names the page parameters, its arm streams.
    let arm = item(&code, "\"listMembers\" => {");
    for expected in [
        "let client = ctx.member_client()?;",
        "let mut call = client.list_members();",
        "if let Some(value) = input.param(\"pageSize\") {",
        "call = call.page_size(crate::input::Arg::new(value));",
        "return crate::output::items(sink, call.stream()).await;",
        "crate::output::data(sink, call.await)",
    ] {
        assert!(has(arm, expected), "{expected}\n{arm}");
    }
    let record = record(&code, "listMembers");
    assert!(
        has(
            record,
            "paged: Some(Paged { page: \"pageNum\", size: \"pageSize\", }),"
        ),
        "{record}"
    );
    // A body, a body field of a shared enum, and an enum parameter's conversion.
    let arm = item(&code, "\"batchOrder\" => {");
    assert!(
        has(
            arm,
            "call = call.body(input.body::<licensing_sdk::order::types::BatchOrderRequest>(op)?);"
        ),
        "{arm}"
    );
    assert!(!has(arm, "stream()"), "{arm}");
    assert!(
        has(&code, "kind: Kind::Enum(&[\"sync\", \"async\"]),"),
        "{code}"
    );
    assert!(
        has(
            &code,
            "impl TryFrom<crate::input::Arg<'_>> for licensing_sdk::DefaultCustomer {"
        ),
        "{code}"
    );
    // g_nonce is the runtime's, never a flag.
    assert!(!has(&code, "g_nonce"), "{code}");
    let (bulk, _) = code.split_once("pub static OPERATIONS").unwrap();
    assert!(
        has(bulk, "pub static BULK_FIELDS: &[(&str, char)] = &["),
        "{bulk}"
    );
    for field in [
        "(\"sequence\", 'i')",
        "(\"customerId\", 's')",
        "(\"assets\", 'j')",
    ] {
        assert!(has(bulk, field), "{field}\n{bulk}");
    }
}

#[test]
fn a_body_field_named_like_a_parameter_gets_a_prefix() {
    let code = generate_with(
        |s| {
            replace_once(
                s,
                "      required: [channelCode, channelOrderId, syncMode, orderList]\n      properties:\n",
                "      required: [channelCode, channelOrderId, syncMode, orderList]\n      properties:\n        appKey: {type: string, description: Again.}\n",
            )
        },
        same,
    )
    .unwrap();
    let record = record(&code, "batchOrder");
    assert!(record.contains("flag: \"app-key\",\n"), "{record}");
    assert!(record.contains("flag: \"body-app-key\",\n"), "{record}");
}

#[test]
fn a_header_parameter_stops_the_build() {
    let error = generate_with(same, |s| {
        replace_once(
            s,
            "        - name: keyword\n          in: query\n",
            "        - name: keyword\n          in: header\n",
        )
    });
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: listMembers: parameter `keyword`: only path and query parameters \
         are supported"
    );
}

#[test]
fn a_parameter_named_like_a_global_flag_stops_the_build() {
    let error = generate_with(same, |s| {
        replace_once(s, "        - name: keyword\n", "        - name: output\n")
    });
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: listMembers: parameter `output`: flag --output is taken"
    );
}

#[test]
fn an_object_parameter_stops_the_build() {
    let error = generate_with(same, |s| {
        replace_once(
            s,
            "          description: Employee name or account.\n          schema:\n            type: string\n",
            "          description: Employee name or account.\n          schema:\n            type: object\n",
        )
    });
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: listMembers: parameter `keyword`: only scalar parameters are supported"
    );
}

#[test]
fn a_parameter_whose_setter_is_a_keyword_stops_the_build() {
    let error = generate_with(same, |s| {
        replace_once(s, "        - name: keyword\n", "        - name: type\n")
    });
    assert_eq!(
        error.unwrap_err(),
        "spec/member.yaml: listMembers: parameter `type`: setter `type` is not a Rust identifier"
    );
}

#[test]
fn without_batch_order_the_bulk_fields_stop_the_build() {
    let error = generate_with(
        |s| replace_once(s, "operationId: batchOrder\n", "operationId: batchOrders\n"),
        same,
    );
    assert_eq!(
        error.unwrap_err(),
        "spec/order.yaml: batchOrder: no such operation with a body (read by `licensing orders \
         submit`)"
    );
}
