//! By default the tools are the reads, and each returns the data the SDK returns (as the
//! command line prints it); a business error is a tool error with its code and meaning.

use heck::ToKebabCase as _;
use licensing_sdk::operations::{self, Service};
use serde_json::{Value, json};

use crate::{Sim, call, dead_url, error, names, read_operations, read_tools};

/// The command line's call of `tool` with `args`: `SERVICE COMMAND --flag value …`.
fn command_of(tool: &str, args: &Value) -> Vec<String> {
    let op = operations::find(tool).unwrap();
    let service = match op.service {
        Service::Order => "order",
        Service::Member => "member",
    };
    let mut command = vec![service.to_string(), tool.to_kebab_case()];
    for (name, value) in args.as_object().unwrap() {
        command.push(format!("--{}", name.to_kebab_case()));
        command.push(match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    command
}

/// A valid call of every read of the demo seed.
fn reads(sim: &Sim) -> Vec<(&'static str, Value)> {
    let assets = sim.cli(&[
        "member",
        "list-asset-nums",
        "--enterprise-global-id",
        "EG-000001",
    ]);
    let asset = assets[0]["assetId"].as_str().unwrap().to_string();
    let acme = json!({"enterpriseGlobalId": "EG-000001"});
    vec![
        (
            "queryEnterprise",
            json!({"channelCode": "CH01", "channelCustomerId": "CC-ACME", "defaultCustomer": "N"}),
        ),
        ("listVirtualAssets", acme.clone()),
        (
            "listMembers",
            json!({"enterpriseGlobalId": "EG-000001", "pageNum": 1, "pageSize": 10}),
        ),
        ("listAssetNums", acme.clone()),
        ("listAssetProducts", json!({"assetId": asset})),
        ("listLentLocks", acme),
    ]
}

#[test]
fn the_tools_are_the_reads_and_each_returns_what_the_sdk_returns() {
    let sim = Sim::start();
    let calls = reads(&sim);
    let mut platform: Vec<String> = read_operations().iter().map(|s| s.to_string()).collect();
    platform.sort();
    let mut called: Vec<String> = calls.iter().map(|(t, _)| t.to_string()).collect();
    called.sort();
    assert_eq!(called, platform, "every read is called once");
    let before = sim.journal().len();
    let mut steps = vec![json!({"do": "list"})];
    steps.extend(calls.iter().map(|(tool, args)| call(tool, args.clone())));
    let run = sim.python(&[], json!({"steps": steps}));
    assert_eq!(run.out["protocol"], "2025-11-25");
    assert_eq!(names(run.step(0)), read_tools());
    for tool in run.step(0).as_array().unwrap() {
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert_eq!(tool["outputSchema"]["type"], "object");
        if !tool["name"].as_str().unwrap().starts_with("sandbox_") {
            assert!(tool["description"].as_str().unwrap().contains("- 500: "));
        }
    }
    let journal = sim.journal();
    let sent: Vec<&String> = journal[before..].iter().collect();
    assert_eq!(sent.len(), calls.len(), "{sent:?}");
    for (i, (tool, args)) in calls.iter().enumerate() {
        let step = run.step(i + 1);
        assert_eq!(step["isError"], false, "{tool}: {step}");
        let sdk = sim.cli(
            &command_of(tool, args)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        assert_eq!(step["structured"]["data"], sdk, "{tool}");
        let text: Value = serde_json::from_str(step["text"][0].as_str().unwrap()).unwrap();
        assert_eq!(
            text, step["structured"],
            "{tool}: the text is the structured content"
        );
    }
    let audit = sim.audit();
    assert_eq!(audit.len(), calls.len());
    assert!(
        audit
            .iter()
            .all(|l| l["outcome"] == "ok" && l["confirmed"].is_null())
    );
}

#[test]
fn a_business_error_is_a_tool_error_with_its_code_and_meaning() {
    let sim = Sim::start();
    let run = sim.python(
        &[],
        json!({"steps": [call("listLentLocks", json!({"enterpriseGlobalId": "EG-999999"}))]}),
    );
    let error = error(run.step(0));
    let code = error["code"].as_str().unwrap();
    let op = operations::find("listLentLocks").unwrap();
    assert!(op.documents(code), "{code}");
    let meaning = licensing_sdk::ErrorCode::from(code).description().unwrap();
    assert_eq!(error["meaning"], meaning);
    assert!(error["message"].as_str().unwrap().contains(code));
    assert_eq!(sim.asked("listLentLocks"), 1);
    let audit = sim.audit();
    assert_eq!(audit[0]["outcome"], "failed");
    assert_eq!(audit[0]["detail"], code);
}

#[test]
fn the_sessions_traffic_is_a_har_the_coverage_report_reads() {
    use licensing_coverage::{Catalogue, Report, exchange};
    let sim = Sim::start();
    let har = sim.dir.path().join("session.har");
    let har_flag = har.display().to_string();
    let run = sim.python(
        &["--har", &har_flag],
        json!({"steps": [
            call("listLentLocks", json!({"enterpriseGlobalId": "EG-000001"})),
            call("listMembers", json!({"enterpriseGlobalId": "EG-000001", "pageNum": 1, "pageSize": 5})),
            call("listLentLocks", json!({"enterpriseGlobalId": "EG-999999"})),
            call("listMembers", json!({"enterpriseGlobalId": "EG-000001", "pageNum": "x"})),
        ]}),
    );
    let code = error(run.step(2))["code"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(&har).unwrap();
    sim.assert_no_secret("the HAR", &text);
    let document: Value = serde_json::from_str(&text).unwrap();
    let entries = document["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3, "the invalid call sent nothing");
    let exchanges = exchange::read("session.har", &document).unwrap();
    let report = Report::new(&Catalogue::documents().unwrap(), &exchanges);
    assert_eq!(report.totals.operations.seen, 2);
    let lent: Vec<_> = exchanges
        .iter()
        .filter(|x| x.operation.as_deref() == Some("listLentLocks"))
        .collect();
    assert_eq!(lent.len(), 2);
    assert_eq!(entries[2]["response"]["status"], 299);
    assert!(
        entries[2]["response"]["content"]["text"]
            .as_str()
            .unwrap()
            .contains(&code)
    );
}

#[test]
fn the_admin_api_is_listed_only_when_the_target_is_a_simulator() {
    let sim = Sim::start();
    let run = sim.python(
        &[],
        json!({"steps": [call("sandbox_getClock", json!({})), call("sandbox_reset", json!({}))]}),
    );
    assert_eq!(run.step(0)["isError"], false, "{}", run.step(0));
    assert!(
        run.step(0)["structured"]["data"].is_object(),
        "{}",
        run.step(0)
    );
    assert_eq!(error(run.step(1))["flag"], "--allow-writes");
    let dead = dead_url();
    let run = sim.python(
        &["--sandbox-url", &dead],
        json!({"steps": [{"do": "list"}]}),
    );
    let mut platform: Vec<String> = read_operations().iter().map(|s| s.to_string()).collect();
    platform.sort();
    assert_eq!(names(run.step(0)), platform);
}

/// The admin API's answer to `method path` with `body`, as JSON.
fn admin(sim: &Sim, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let url = format!("{}/__sandbox/v1/{path}", sim.sim.url());
    sim.rt.block_on(async {
        let mut request = reqwest::Client::new().request(method, url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    })
}

#[test]
fn every_admin_read_returns_what_the_admin_api_returns() {
    use reqwest::Method;
    let sim = Sim::start();
    // Still time, a rule and a request in the journal: every read has something to say
    // that does not change while the tools and the API are asked.
    admin(
        &sim,
        Method::PUT,
        "clock",
        Some(json!({"now": 1_767_225_600_000u64, "frozen": true})),
    );
    let rule = admin(
        &sim,
        Method::POST,
        "faults",
        Some(
            json!({"operation": "addMembers", "times": 5, "fault": {"kind": "status", "status": 503}}),
        ),
    );
    let id = rule["id"].clone();
    sim.cli(&[
        "member",
        "list-lent-locks",
        "--enterprise-global-id",
        "EG-000001",
    ]);
    let calls = [
        ("sandbox_exportState", json!({}), "state".to_string()),
        (
            "sandbox_getBuiltinSeed",
            json!({"name": "demo"}),
            "seeds/demo".into(),
        ),
        (
            "sandbox_listJournal",
            json!({"operation": "listLentLocks", "limit": 10}),
            "journal?operation=listLentLocks&limit=10".into(),
        ),
        ("sandbox_listFaults", json!({}), "faults".into()),
        (
            "sandbox_getFault",
            json!({"id": id}),
            format!("faults/{}", id.as_u64().unwrap()),
        ),
        ("sandbox_getClock", json!({}), "clock".into()),
    ];
    let listed: Vec<String> = read_tools()
        .into_iter()
        .filter(|t| t.starts_with("sandbox_"))
        .collect();
    let mut called: Vec<String> = calls.iter().map(|(t, _, _)| t.to_string()).collect();
    called.sort();
    assert_eq!(called, listed, "every admin read is called once");
    let steps: Vec<Value> = calls.iter().map(|(t, a, _)| call(t, a.clone())).collect();
    let run = sim.python(&[], json!({"steps": steps}));
    for (i, (tool, _, path)) in calls.iter().enumerate() {
        let step = run.step(i);
        assert_eq!(step["isError"], false, "{tool}: {step}");
        let api = admin(&sim, Method::GET, path, None);
        assert_eq!(step["structured"]["data"], api, "{tool}");
    }
    assert_eq!(
        run.step(5)["structured"]["data"]["now"],
        1_767_225_600_000u64
    );
}
