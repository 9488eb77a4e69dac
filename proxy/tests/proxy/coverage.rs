//! `licensing-proxy coverage` over a session sent through the proxy to a simulator: the
//! proxy's recording and the simulator's journal of the same session give the same counts,
//! never-seen lists and suspected double submission; `--min` sets the exit status.

use std::process::Command;

use licensing_coverage::{Catalogue, Report, exchange};
use licensing_test_support::orders;
use serde_json::{Value, json};

use crate::support;

#[tokio::test]
async fn the_recording_and_the_journal_of_a_session_cover_the_same() {
    let env = support::start().await;
    env.sim.admin().clear_journal().send().await.unwrap();
    env.proxy.recording().start(None, None);
    let eg = env.enterprise.clone();
    let page = |n: &'static str| vec![("pageNum", n), ("pageSize", "1")];
    assert_eq!(
        env.call("listMembers", &[&eg], &page("1"), None).await.body["code"],
        0
    );
    assert_eq!(
        env.call("listMembers", &[&eg], &page("2"), None).await.body["code"],
        0
    );
    // One business error: an enterprise that does not exist.
    let missing = env.call("listAssetNums", &["EG-404"], &[], None).await;
    assert_ne!(missing.body["code"], 0, "{missing:?}");
    let numbers = env
        .call("allocateShellNums", &[], &[], Some(json!({"size": 1})))
        .await;
    let number = numbers.body["data"][0].as_str().unwrap().to_string();
    let batch = json!({"channelCode": "CH01", "channelOrderId": "CO-COVER-1", "syncMode": "sync",
        "orderList": [orders::new_buy(&number)]});
    // A bulk run resent: the same batch twice, applied twice (the documents are silent).
    for _ in 0..2 {
        let r = env
            .call("batchOrder", &[], &[("appKey", "app")], Some(batch.clone()))
            .await;
        assert_eq!(r.body["code"], 0, "{r:?}");
    }
    let har = env.proxy.recording().stop();
    let journal = licensing_test_support::sim::journal(&env.sim.admin()).await;
    let journal = serde_json::to_value(&journal).unwrap();

    let dir = support::temp_dir("coverage");
    let har_file = dir.path().join("session.har");
    let journal_file = dir.path().join("journal.json");
    std::fs::write(&har_file, har.to_string()).unwrap();
    std::fs::write(&journal_file, journal.to_string()).unwrap();
    let catalogue = Catalogue::documents().unwrap();
    let read = |name: &str, document: &Value| {
        Report::new(&catalogue, &exchange::read(name, document).unwrap())
    };
    let (from_har, from_journal) = (read("session.har", &har), read("journal.json", &journal));
    for r in [&from_har, &from_journal] {
        assert_eq!(
            (r.totals.exchanges, r.totals.unmatched),
            (6, 0),
            "{:?}",
            r.totals
        );
        assert_eq!(r.totals.operations.seen, 4);
        assert_eq!(r.totals.codes.seen, 1, "the one business error");
        assert_eq!((r.totals.paging.seen, r.totals.paging.of), (1, 1));
        assert_eq!(r.suspected_double_submissions.len(), 1);
        assert_eq!(
            r.suspected_double_submissions[0].what,
            "channelOrderId CO-COVER-1"
        );
    }
    assert_eq!(from_har.totals, from_journal.totals);
    let strip = |r: &Report| {
        let mut v = serde_json::to_value(r).unwrap();
        for op in v["operations"].as_array_mut().unwrap() {
            op["first"] = Value::Null;
        }
        v["suspectedDoubleSubmissions"] = Value::Null;
        v
    };
    assert_eq!(
        strip(&from_har),
        strip(&from_journal),
        "the same counts and lists"
    );
    let d = &from_har.suspected_double_submissions[0];
    assert_eq!(
        (d.first.as_str(), d.second.as_str()),
        ("session.har#4", "session.har#5")
    );
    let d = &from_journal.suspected_double_submissions[0];
    assert!(
        d.first.starts_with("journal.json#seq ") && d.first != d.second,
        "{d:?}"
    );

    // The command line: the report on stdout, exit 1 below a minimum, 0 at or above it.
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
            .arg("coverage")
            .args(args)
            .arg(&har_file)
            .arg(&journal_file)
            .output()
            .unwrap()
    };
    let out = run(&["--min", "operations=100%,codes=1%"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("coverage below its minimum: operations 4/"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| operations called | 4/"), "{stdout}");
    let out = run(&["--min", "operations=10%", "--format", "junit"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("<?xml"));
    let out = run(&["--format", "json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["totals"]["exchanges"], 12, "both files, merged");
    // One double in each file: the two files are two records of one history, and each is
    // read on its own for doubles.
    assert_eq!(
        json["suspectedDoubleSubmissions"].as_array().unwrap().len(),
        2
    );
}
