//! The TypeScript SDK's client over stdio: the same tools, the same data, and its
//! confirmations asked and honoured (it checks every result against the tool's output
//! schema with Ajv, as the Python SDK does with jsonschema).

use serde_json::json;

use crate::{Sim, call, error, names, read_tools};

#[test]
fn the_typescript_client_sees_the_reads_and_confirms_each_write_once() {
    let sim = Sim::start();
    let allocate = call("allocateShellNums", json!({"body": {"size": 2}}));
    let run = sim.node(
        &["--allow-writes", "allocateShellNums"],
        json!({"elicitation": "accept", "steps": [
            {"do": "list"},
            call("listMembers", json!({"enterpriseGlobalId": "EG-000001", "pageNum": 1, "pageSize": 5})),
            allocate.clone(),
            allocate.clone(),
        ]}),
    );
    let mut expected = read_tools();
    expected.push("allocateShellNums".into());
    expected.sort();
    assert_eq!(names(run.step(0)), expected);
    let sdk = sim.cli(&[
        "member",
        "list-members",
        "--enterprise-global-id",
        "EG-000001",
        "--page-num",
        "1",
        "--page-size",
        "5",
    ]);
    assert_eq!(run.step(1)["isError"], false, "{}", run.step(1));
    assert_eq!(run.step(1)["structured"]["data"], sdk);
    assert_eq!(run.step(2)["isError"], false, "{}", run.step(2));
    assert_eq!(
        run.step(3)["structured"]["data"],
        run.step(2)["structured"]["data"]
    );
    assert_eq!(run.asked(), 1);
    assert_eq!(sim.asked("allocateShellNums"), 1);

    let declined = sim.node(
        &["--allow-writes", "allocateShellNums"],
        json!({"elicitation": "decline", "steps": [allocate.clone()]}),
    );
    assert_eq!(error(declined.step(0))["flag"], "--no-confirm");
    assert_eq!(declined.asked(), 1);
    assert_eq!(sim.asked("allocateShellNums"), 1);

    // This client answers a server's request beside its other traffic: a question left
    // unanswered is given up on at --confirm-timeout, and the call answered meanwhile.
    let unanswered = sim.node(
        &[
            "--allow-writes",
            "allocateShellNums",
            "--confirm-timeout",
            "1",
        ],
        json!({"elicitation": "wait", "steps": [allocate]}),
    );
    let refused = error(unanswered.step(0));
    assert_eq!(refused["flag"], "--no-confirm");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .ends_with("nothing was sent"),
        "{refused}"
    );
    assert_eq!(unanswered.asked(), 1);
    assert_eq!(sim.asked("allocateShellNums"), 1);
    assert_eq!(sim.audit().last().unwrap()["confirmed"], false);
}
