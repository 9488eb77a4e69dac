//! Arguments an assistant may be talked into: too large, of the wrong type, carrying a
//! header or a path of their own. Each is a tool error naming the argument, and nothing
//! reaches the platform.

use serde_json::{Value, json};

use crate::{Sim, call, error};

fn members(overrides: Value) -> Value {
    let mut args = json!({"enterpriseGlobalId": "EG-000001", "pageNum": 1, "pageSize": 10});
    for (k, v) in overrides.as_object().unwrap() {
        if v.is_null() {
            args.as_object_mut().unwrap().remove(k);
        } else {
            args[k] = v.clone();
        }
    }
    call("listMembers", args)
}

#[test]
fn hostile_arguments_are_tool_errors_naming_the_field() {
    let sim = Sim::start();
    let huge = "x".repeat(2 * 1024 * 1024);
    let cases = [
        (members(json!({"pageNum": "1"})), "pageNum"),
        (members(json!({"pageSize": 1_000_000})), "pageSize"),
        (members(json!({"pageSize": -1})), "pageSize"),
        (members(json!({"keyword": "x".repeat(5000)})), "keyword"),
        (members(json!({"keyword": "a\r\nX-Injected: 1"})), "keyword"),
        (members(json!({"keyword": huge})), "keyword"),
        (
            members(json!({"enterpriseGlobalId": "../../../__sandbox/v1/reset"})),
            "enterpriseGlobalId",
        ),
        (
            members(json!({"enterpriseGlobalId": null})),
            "enterpriseGlobalId",
        ),
        (members(json!({"extra\u{1b}[2J": 1})), "extra\\u{1b}[2J"),
        (
            call(
                "queryEnterprise",
                json!({"channelCode": {"$ne": ""}, "channelCustomerId": "CC-ACME", "defaultCustomer": "N"}),
            ),
            "channelCode",
        ),
        (
            call(
                "queryEnterprise",
                json!({"channelCode": "CH01", "channelCustomerId": "CC-ACME", "defaultCustomer": "N; DROP"}),
            ),
            "defaultCustomer",
        ),
        (
            call(
                "addMembers",
                json!({"enterpriseGlobalId": "EG-000001", "body": "[]"}),
            ),
            "body",
        ),
    ];
    let steps: Vec<Value> = cases.iter().map(|(step, _)| step.clone()).collect();
    let run = sim.python(
        &["--allow-writes", "addMembers", "--no-confirm"],
        json!({"steps": steps}),
    );
    for (i, (step, field)) in cases.iter().enumerate() {
        let error = error(run.step(i));
        assert_eq!(error["field"], *field, "{step}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(&format!("`{field}`")), "{message}");
        assert!(message.len() < 1000, "{message}");
        assert!(
            !message.contains('\u{1b}') && !message.contains('\r'),
            "{message}"
        );
    }
    // A body of the wrong shape is checked against the SDK's type, which names the field.
    let run = sim.python(
        &["--allow-writes", "addMembers", "--no-confirm"],
        json!({"steps": [call("addMembers", json!({"enterpriseGlobalId": "EG-000001", "body": {"userList": "x"}}))]}),
    );
    let message = error(run.step(0))["message"].as_str().unwrap();
    assert!(
        message.contains("userList") && message.contains("nothing was sent"),
        "{message}"
    );
    let journal = sim.journal();
    assert!(
        !journal
            .iter()
            .any(|o| o == "listMembers" || o == "queryEnterprise" || o == "addMembers"),
        "{journal:?}"
    );
    let audit = sim.audit();
    assert!(audit.iter().all(|l| l["outcome"] == "invalid"), "{audit:?}");
}

#[test]
fn a_reply_echoing_a_token_or_carrying_control_characters_is_shown_safe() {
    let sim = Sim::start();
    let mut item = crate::bounds::an_asset(&sim);
    item["assetId"] = format!("A-{}", sim.secrets[0]).into();
    item["assetNum"] = "80000\u{202e}00001\u{1b}[2J".into();
    crate::bounds::reply_data(&sim, json!([item]));
    // `python` asserts that the token is in none of the client's output, the server's
    // log and the audit log.
    let run = sim.python(
        &[],
        json!({"steps": [call("listAssetNums", json!({"enterpriseGlobalId": "EG-000001"}))]}),
    );
    let step = run.step(0);
    assert_eq!(step["isError"], false, "{step}");
    let shown = &step["structured"]["data"][0];
    assert_eq!(shown["assetId"], "A-[redacted]");
    assert_eq!(shown["assetNum"], "80000\\u{202e}00001\\u{1b}[2J");
    assert!(!step["text"][0].as_str().unwrap().contains('\u{1b}'));
}
