//! `licensing-proxy coverage` over a real simulator's journal of bulk batches of the sizes
//! bulk runs send (100 orders, about 85 KB, and the command line's default of 500): the
//! journal keeps such a body only by its size and summary, and the report still names the
//! batch sent twice (`CO-A`, journal seq 2 and 4) and not the two different batches.

use std::{num::NonZeroU32, path::Path, process::Command};

use licensing_sdk::{RetryPolicy, order, order::types as ot};
use licensing_sim::{DEFAULT_APP_TOKEN, Simulator};
use licensing_test_support::orders;
use serde_json::{Value, json};

/// A batch of one `new_buy` order of the demo customer per asset number.
fn batch(id: &str, numbers: &[String]) -> ot::BatchOrderRequest {
    let list: Vec<Value> = numbers.iter().map(|n| orders::new_buy(n)).collect();
    serde_json::from_value(json!({"channelCode": "CH01", "channelOrderId": id,
        "syncMode": "sync", "orderList": list}))
    .expect("a valid batch")
}

/// The journal of: numbers allocated (seq 1), batch `CO-A` (seq 2), batch `CO-B` of other
/// assets (seq 3), `CO-A` again (seq 4), written to `path`.
async fn journal_of_batches(size: usize, path: &Path) -> Value {
    let sim = Simulator::start().await.unwrap();
    licensing_test_support::sim::load_demo(&sim.admin()).await;
    let client = order::Client::builder(&sim.url())
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let count = u32::try_from(2 * size).unwrap();
    let numbers: Vec<String> = client
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(NonZeroU32::new(count).unwrap()))
        .await
        .unwrap()
        .into_iter()
        .map(String::from)
        .collect();
    let (a, b) = numbers.split_at(size);
    for request in [batch("CO-A", a), batch("CO-B", b), batch("CO-A", a)] {
        client
            .batch_order()
            .app_key("app")
            .body(request)
            .await
            .expect("the batch is applied");
    }
    let journal = licensing_test_support::sim::journal(&sim.admin()).await;
    let journal = serde_json::to_value(&journal).unwrap();
    std::fs::write(path, journal.to_string()).unwrap();
    journal
}

fn coverage(path: &Path, format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
        .args(["coverage", "--format", format])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The report names `CO-A` at seq 2 and 4, nothing else, and left nothing unchecked.
async fn named_on_batches_of(size: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.json");
    let journal = journal_of_batches(size, &path).await;
    let entries = journal["entries"].as_array().unwrap();
    let seqs: Vec<(i64, &str)> = entries
        .iter()
        .map(|e| (e["seq"].as_i64().unwrap(), e["operation"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seqs,
        [
            (1, "allocateShellNums"),
            (2, "batchOrder"),
            (3, "batchOrder"),
            (4, "batchOrder")
        ]
    );
    // The case this is about: the journal does not keep these bodies whole.
    for batch in &entries[1..] {
        let omitted = batch["requestBody"]["omitted"].as_u64();
        assert!(
            omitted.is_some_and(|n| n > 64 * 1024),
            "{}",
            batch["requestBody"]
        );
    }
    let report: Value = serde_json::from_str(&coverage(&path, "json")).unwrap();
    let name = path.display();
    assert_eq!(
        report["suspectedDoubleSubmissions"],
        json!([{"operation": "batchOrder", "what": "channelOrderId CO-A",
            "first": format!("{name}#seq 2"), "second": format!("{name}#seq 4")}]),
        "{size} orders a batch: {report:#}"
    );
    assert_eq!(report["doublesUnchecked"], json!({}), "{report:#}");
    let markdown = coverage(&path, "markdown");
    assert!(!markdown.contains("could not be checked"), "{markdown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_batch_sent_twice_is_named_on_a_journal_of_100_order_batches() {
    named_on_batches_of(100).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_batch_sent_twice_is_named_on_a_journal_of_500_order_batches() {
    named_on_batches_of(500).await;
}

#[test]
fn an_entry_past_max_entry_bytes_is_refused_naming_the_file_and_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.har");
    let small =
        json!({"request": {"method": "GET", "url": "http://h/x"}, "response": {"status": 200}});
    let mut big = small.clone();
    big["request"]["postData"] = json!({"text": "x".repeat(2_000_000)});
    std::fs::write(&path, json!({"log": {"entries": [small, big]}}).to_string()).unwrap();
    for tool in ["coverage", "report"] {
        let run = |bound: &str| {
            Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
                .args([tool, "--max-entry-bytes", bound])
                .arg(&path)
                .output()
                .unwrap()
        };
        let out = run("1000000");
        assert_eq!(out.status.code(), Some(2), "{tool}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = format!(
            "{}: entry 1 is larger than 1000000 bytes, the most one entry may have (--max-entry-bytes)",
            path.display()
        );
        assert!(stderr.contains(&expected), "{tool}: {stderr}");
        assert_eq!(run("3000000").status.code(), Some(0), "{tool}");
    }
}
