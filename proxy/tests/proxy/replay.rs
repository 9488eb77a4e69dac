//! Recording → seed → a simulator on that seed → replay: the recorded reads are answered
//! the same way. The report reads the same recording; a replay against a simulator that
//! lacks the records finds the differences.

use licensing_proxy::tools::{self, ReplayOptions};
use licensing_sim::Simulator;
use serde_json::json;

use super::support::{self, tokens};

#[tokio::test]
async fn a_seed_from_a_recording_answers_its_reads_the_same_way() {
    let env = support::start().await;
    env.proxy.recording().start(None, None);
    let eg = env.enterprise.clone();
    let url = env.proxy.url();
    let reads = [
        (
            "listMembers",
            vec![eg.as_str()],
            vec![("pageNum", "1"), ("pageSize", "10")],
        ),
        ("listAssetNums", vec![eg.as_str()], vec![]),
        ("listLentLocks", vec![eg.as_str()], vec![]),
        ("listAssetProducts", vec![env.asset_id.as_str()], vec![]),
        (
            "queryEnterprise",
            vec![],
            vec![
                ("channelCode", "CH01"),
                ("channelCustomerId", "CC-ACME"),
                ("defaultCustomer", "N"),
            ],
        ),
        ("listAssetNums", vec!["EG-404"], vec![]),
    ];
    for (id, path, query) in &reads {
        let r = support::call(&env.http, &url, id, path, query, None).await;
        assert_eq!(r.deviations, 0, "{id}: {r:?}");
    }
    let har = env.proxy.recording().stop();
    assert_eq!(har["log"]["entries"].as_array().unwrap().len(), reads.len());
    let dir = support::temp_dir("replay");
    let file = dir.path().join("reads.har");
    std::fs::write(&file, har.to_string()).unwrap();

    let seed = tools::seed_from_recording(&file).unwrap();
    let seeded = serde_json::to_value(&seed).unwrap();
    let acme = &seeded["enterprises"][0];
    assert_eq!(acme["name"], "Acme Robotics");
    assert_eq!(
        acme["customers"],
        json!([{"channelCode": "CH01", "channelCustomerId": "CC-ACME"}])
    );
    assert_eq!(acme["assets"].as_array().unwrap().len(), 3);
    assert_eq!(acme["assets"][2]["lentLock"], json!(true));
    let users: Vec<&str> = acme["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["userName"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["alice", "bob", "carol"]);
    assert_eq!(acme["members"][0]["assets"], json!(["8000000001"]));

    let copy = Simulator::builder().seed(seed).start().await.unwrap();
    let same = tools::replay(&file, &copy.url(), &tokens(), ReplayOptions::default())
        .await
        .unwrap();
    assert_eq!((same.sent, same.skipped), (reads.len(), 0));
    assert!(same.differences.is_empty(), "{}", same.to_text());

    // Against a simulator without those records, the reads differ, and say where.
    let empty = Simulator::start().await.unwrap();
    let differ = tools::replay(&file, &empty.url(), &tokens(), ReplayOptions::default())
        .await
        .unwrap();
    let what: Vec<(&str, &str)> = differ
        .differences
        .iter()
        .map(|d| (d.operation_id.as_deref().unwrap_or(""), d.what.as_str()))
        .collect();
    assert_eq!(
        what,
        [
            ("listMembers", "shape"),
            ("listAssetNums", "status"),
            ("listLentLocks", "status"),
            ("listAssetProducts", "status"),
            ("queryEnterprise", "shape"),
        ],
        "the unknown enterprise's read (the last) is answered the same: {}",
        differ.to_text()
    );
    assert_eq!(differ.differences[0].pointer, "/data/list");
    assert_eq!(
        (
            differ.differences[0].recorded.as_str(),
            differ.differences[0].replayed.as_str()
        ),
        ("5 items", "0 items")
    );
}

#[tokio::test]
async fn the_report_names_each_rule_with_its_first_exchange() {
    let env = support::start().await;
    env.proxy.recording().start(None, None);
    env.patch("listLentLocks", json!([{"op": "replace", "path": "/data/0/borrowedFlag", "value": 0}, {"op": "add", "path": "/code", "value": "77"}]))
        .await;
    let eg = env.enterprise.clone();
    let first = env.call("listLentLocks", &[&eg], &[], None).await;
    env.call("listLentLocks", &[&eg], &[], None).await;
    env.call("listAssetNums", &[&eg], &[], None).await;
    let dir = support::temp_dir("report");
    let file = dir.path().join("r.har");
    std::fs::write(&file, env.proxy.recording().stop().to_string()).unwrap();
    let report = tools::report(&file).unwrap();
    let lent = &report.operations[0];
    assert_eq!(lent.operation_id.as_deref(), Some("listLentLocks"));
    assert_eq!((lent.calls, lent.deviations), (2, 4));
    let rules: Vec<(&str, u64)> = lent
        .rules
        .iter()
        .map(|r| (r.rule.as_str(), r.count))
        .collect();
    assert_eq!(rules, [("type", 2), ("undocumented-code", 2)]);
    assert_eq!(lent.rules[0].pair.exchange, first.exchange);
    assert_eq!(lent.rules[0].first.pointer, "/data/0/borrowedFlag");
    assert!(
        lent.rules[0]
            .pair
            .reply_body
            .as_deref()
            .unwrap()
            .contains("\"77\"")
    );
    assert!(lent.rules[0].pair.request.starts_with("GET http://"));
    assert_eq!(
        (report.operations[1].calls, report.operations[1].deviations),
        (1, 0)
    );
    let text = report.to_text();
    assert!(
        text.contains("listLentLocks: 2 calls, 4 deviations"),
        "{text}"
    );
    assert!(text.contains("undocumented-code x2"), "{text}");
}
