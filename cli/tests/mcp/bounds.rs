//! Replies too large for an assistant's context (100,000 items, 50 MB), made by the
//! simulator's `patch` fault on a real reply, come back bounded with a note of what was
//! left out, and still match the tool's output schema (the SDK checks it).

use serde_json::{Value, json};

use crate::{Sim, call};

/// The cap the server runs with in these tests.
const CAP: usize = 64 * 1024;

/// An asset number of the demo enterprise as `licensing` lists it: a real item, which
/// the replies made up here copy so that only what they change is out of the ordinary.
pub fn an_asset(sim: &Sim) -> Value {
    let assets = sim.cli(&[
        "member",
        "list-asset-nums",
        "--enterprise-global-id",
        "EG-000001",
    ]);
    assets[0].clone()
}

/// Makes the next `listAssetNums` reply's data `data`.
pub fn reply_data(sim: &Sim, data: Value) {
    sim.fault(json!({
        "operation": "listAssetNums",
        "times": 1,
        "fault": {"kind": "patch", "patch": [{"op": "replace", "path": "/data", "value": data}]},
    }));
}

fn list_assets(sim: &Sim) -> Value {
    let cap = CAP.to_string();
    let run = sim.python(
        &["--max-result-bytes", &cap],
        json!({"steps": [call("listAssetNums", json!({"enterpriseGlobalId": "EG-000001"}))]}),
    );
    assert!(run.stdout.len() < 4 * CAP, "{} bytes", run.stdout.len());
    run.step(0).clone()
}

#[test]
fn a_reply_of_100000_items_or_50_mb_is_bounded_with_a_note() {
    let sim = Sim::start();
    let item = an_asset(&sim);
    let many: Vec<Value> = (0..100_000)
        .map(|i| {
            let mut item = item.clone();
            item["assetNum"] = format!("{:010}", 8_000_000_000u64 + i).into();
            item
        })
        .collect();
    reply_data(&sim, Value::Array(many));
    let step = list_assets(&sim);
    assert_eq!(step["isError"], false, "{step}");
    let shown = step["structured"]["data"].as_array().unwrap().len();
    let omitted = &step["structured"]["omitted"];
    assert!(shown > 10, "{shown}");
    assert_eq!(omitted["of"], 100_000);
    assert_eq!(omitted["items"], 100_000 - shown);
    assert!(
        omitted["note"]
            .as_str()
            .unwrap()
            .contains("--max-result-bytes")
    );
    assert!(serde_json::to_string(&step["structured"]).unwrap().len() <= CAP + 1024);

    let mut big = item;
    big["assetId"] = "x".repeat(50 * 1024 * 1024).into();
    reply_data(&sim, json!([big]));
    let step = list_assets(&sim);
    assert_eq!(step["isError"], false, "{step}");
    assert_eq!(step["structured"]["data"], json!([]));
    assert_eq!(step["structured"]["omitted"]["items"], 1);
    assert!(step["structured"]["omitted"]["bytes"].as_u64().unwrap() > 50 * 1024 * 1024);
}
