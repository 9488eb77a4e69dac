//! Writes as the server enforces them: listed only when allowed, sent only once a person
//! confirms, within the session's budget and the listed enterprises; a refused call sends
//! nothing (the simulator's journal shows no request) and names the flag that allows it;
//! a confirmed write retried by the client is applied once.

use std::process::Stdio;

use licensing_sdk::operations::{self, Method};
use serde_json::{Value, json};

use crate::{Sim, call, error, names, read_tools};

fn allocate(size: u32) -> Value {
    call("allocateShellNums", json!({"body": {"size": size}}))
}

#[test]
fn the_list_grows_by_exactly_the_allowed_writes() {
    let sim = Sim::start();
    let run = sim.python(
        &["--allow-writes", "disableLocks,allocateShellNums"],
        json!({"steps": [{"do": "list"}]}),
    );
    let mut expected = read_tools();
    expected.extend(["allocateShellNums".to_string(), "disableLocks".to_string()]);
    expected.sort();
    assert_eq!(names(run.step(0)), expected);
    let all = sim.python(
        &["--allow-writes", "all"],
        json!({"steps": [{"do": "list"}]}),
    );
    let tools = all.step(0).as_array().unwrap();
    let platform: Vec<&Value> = tools
        .iter()
        .filter(|t| operations::find(t["name"].as_str().unwrap()).is_some())
        .collect();
    assert_eq!(platform.len(), operations::ALL.len());
    assert!(tools.iter().any(|t| t["name"] == "submitOrders"));
    assert!(tools.iter().any(|t| t["name"] == "sandbox_reset"));
    for tool in platform {
        let op = operations::find(tool["name"].as_str().unwrap()).unwrap();
        let hints = &tool["annotations"];
        assert_eq!(hints["readOnlyHint"], op.method == Method::Get, "{tool}");
        assert_eq!(hints["idempotentHint"], op.idempotent, "{tool}");
        if op.method == Method::Delete {
            assert_eq!(hints["destructiveHint"], true, "{tool}");
        }
    }
    // A name that is not a write stops the server before it serves.
    let output = sim
        .licensing()
        .args(["mcp", "--allow-writes", "listMembers"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`listMembers` is not a write"), "{stderr}");
}

#[test]
fn a_write_not_allowed_or_not_confirmed_sends_nothing_and_names_the_flag() {
    let sim = Sim::start();
    let allowed = ["--allow-writes", "allocateShellNums"];
    let cases: [(&[&str], Value, &str, usize); 5] = [
        (&[], json!("accept"), "--allow-writes", 0),
        (&allowed, Value::Null, "--no-confirm", 0),
        (&allowed, json!("decline"), "--no-confirm", 1),
        (&allowed, json!("cancel"), "--no-confirm", 1),
        (
            &[
                "--allow-writes",
                "allocateShellNums",
                "--confirm-timeout",
                "1",
            ],
            // Unanswered in time: the yes that comes after the server gave up sends nothing.
            json!("late"),
            "--no-confirm",
            1,
        ),
    ];
    for (flags, answer, flag, asked) in cases {
        let mut plan = json!({"steps": [allocate(1)]});
        if !answer.is_null() {
            plan["elicitation"] = answer.clone();
        }
        plan["late"] = json!({"audit": sim.audit_log(), "lines": sim.audit().len()});
        let run = sim.python(flags, plan);
        let error = error(run.step(0));
        assert_eq!(error["flag"], flag, "{flags:?} {answer}");
        let message = error["message"].as_str().unwrap();
        assert!(message.ends_with("nothing was sent"), "{message}");
        assert!(message.contains(flag), "{message}");
        assert_eq!(run.asked(), asked, "{flags:?} {answer}");
        if asked == 1 {
            let question = run.out["asked"][0].as_str().unwrap();
            assert!(question.contains("allocateShellNums"), "{question}");
        }
    }
    assert_eq!(sim.asked("allocateShellNums"), 0, "{:?}", sim.journal());
    let audit = sim.audit();
    assert_eq!(audit.len(), 5);
    assert!(audit.iter().all(|l| l["outcome"] == "refused"));
    assert_eq!(audit[2]["confirmed"], false);
}

#[test]
fn the_budget_and_the_enterprises_bound_every_call() {
    let sim = Sim::start();
    let run = sim.python(
        &[
            "--allow-writes",
            "allocateShellNums",
            "--no-confirm",
            "--max-writes",
            "1",
        ],
        json!({"steps": [allocate(1), allocate(2)]}),
    );
    assert_eq!(run.step(0)["isError"], false, "{}", run.step(0));
    assert_eq!(error(run.step(1))["flag"], "--max-writes");
    assert_eq!(sim.asked("allocateShellNums"), 1);

    let run = sim.python(
        &["--enterprise", "EG-000001"],
        json!({"steps": [
            call("listLentLocks", json!({"enterpriseGlobalId": "EG-000002"})),
            call("listLentLocks", json!({"enterpriseGlobalId": "EG-000001"})),
            call("queryEnterprise", json!({"channelCode": "CH01", "channelCustomerId": "CC-ACME", "defaultCustomer": "N"})),
        ]}),
    );
    let other = error(run.step(0));
    assert_eq!(other["flag"], "--enterprise");
    assert!(other["message"].as_str().unwrap().contains("EG-000002"));
    assert_eq!(run.step(1)["isError"], false, "{}", run.step(1));
    assert_eq!(error(run.step(2))["flag"], "--enterprise");
    assert_eq!(sim.asked("listLentLocks"), 1);
    assert_eq!(sim.asked("queryEnterprise"), 0);
}

#[test]
fn a_confirmed_write_is_applied_once_when_the_client_retries_it() {
    let sim = Sim::start();
    let run = sim.python(
        &["--allow-writes", "allocateShellNums"],
        json!({"elicitation": "accept", "steps": [allocate(2), allocate(2), allocate(3)]}),
    );
    let first = run.step(0);
    assert_eq!(first["isError"], false, "{first}");
    let numbers = first["structured"]["data"].as_array().unwrap();
    assert_eq!(numbers.len(), 2, "{first}");
    let again = run.step(1);
    assert_eq!(again["structured"]["data"], first["structured"]["data"]);
    assert!(
        again["structured"]["note"]
            .as_str()
            .unwrap()
            .contains("nothing was sent again")
    );
    // A call with other arguments is another write, asked about and sent.
    assert_eq!(
        run.step(2)["structured"]["data"].as_array().unwrap().len(),
        3
    );
    assert_eq!(run.asked(), 2);
    assert_eq!(sim.asked("allocateShellNums"), 2);
    let audit = sim.audit();
    let outcomes: Vec<(&Value, &Value)> = audit
        .iter()
        .map(|l| (&l["outcome"], &l["confirmed"]))
        .collect();
    assert_eq!(
        outcomes,
        [
            (&json!("ok"), &json!(true)),
            (&json!("repeated"), &Value::Null),
            (&json!("ok"), &json!(true)),
        ]
    );
    assert_eq!(audit[0]["arguments"], json!({"body": {"size": 2}}));
}

#[test]
fn bulk_orders_are_applied_once_however_often_the_call_is_repeated() {
    let sim = Sim::start();
    let before = sim.orders().len();
    let numbers = sim.cli(&["order", "allocate-shell-nums", "--size", "2"]);
    let orders: Vec<Value> = numbers
        .as_array()
        .unwrap()
        .iter()
        .map(|n| licensing_test_support::orders::new_buy(n.as_str().unwrap()))
        .collect();
    let submit = call(
        "submitOrders",
        json!({"channelCode": "CH01", "orders": orders}),
    );
    let flags = ["--allow-writes", "submitOrders", "--no-confirm"];
    let run = sim.python(&flags, json!({"steps": [submit.clone(), submit.clone()]}));
    let first = &run.step(0)["structured"]["data"]["results"];
    assert_eq!(run.step(0)["isError"], false, "{}", run.step(0));
    let results = first.as_array().unwrap();
    assert_eq!(results.len(), 2, "{first}");
    assert!(results.iter().all(|r| r["outcome"] == "ok"), "{first}");
    assert_eq!(&run.step(1)["structured"]["data"]["results"], first);
    // A new session with the same orders resumes the same run.
    let again = sim.python(&flags, json!({"steps": [submit]}));
    assert_eq!(&again.step(0)["structured"]["data"]["results"], first);
    assert_eq!(sim.asked("batchOrder"), 1);
    assert_eq!(sim.orders().len(), before + 2);
    let audit = std::fs::read_to_string(sim.audit_log()).unwrap();
    assert!(
        audit.contains("\"passwordMobile\":\"[redacted]\""),
        "{audit}"
    );
}
