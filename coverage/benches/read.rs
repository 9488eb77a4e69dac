//! How long a coverage report takes to read a recording, and the recordings to measure
//! `licensing-proxy coverage` on (its memory is measured from outside, by
//! `/usr/bin/time -v`).
//!
//! ```text
//! cargo bench -p licensing-coverage --bench read            # 10,000 exchanges, 3 runs
//! cargo bench -p licensing-coverage --bench read -- --write DIR [MB]
//! ```
//!
//! `--write` writes `DIR/recording.har` (10,000 exchanges of a session: pages read,
//! numbers allocated, batches of 5 orders, employees added, locks disabled), the same as
//! a journal (`DIR/journal.json`), and `DIR/large.har` (batches of 100 orders, about 95 KB
//! an entry, up to MB megabytes, 200 by default).

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::Path,
    time::Instant,
};

use licensing_coverage::{Catalogue, Tally, exchange};
use licensing_test_support::orders;
use serde_json::{Value, json};

/// The exchanges of the timed recording, and the time it must be read in.
const EXCHANGES: usize = 10_000;
const TARGET_SECS: f64 = 2.0;

/// `(operation, method, path, query, body)` of an exchange.
type Call = (
    &'static str,
    &'static str,
    String,
    Vec<(String, String)>,
    Option<Value>,
);

/// Exchange `i` of a session.
fn exchange(i: usize) -> Call {
    let number = |k: usize| format!("{}", 8_000_000_000u64 + k as u64);
    match i % 5 {
        0 => (
            "listMembers",
            "GET",
            "/me/api/v1/enterprise/EG-000001/members".into(),
            vec![
                ("pageNum".into(), format!("{}", 1 + i % 3)),
                ("pageSize".into(), "20".into()),
            ],
            None,
        ),
        1 => (
            "allocateShellNums",
            "POST",
            "/order/api/order/v1/shellnums".into(),
            Vec::new(),
            Some(json!({"size": 5})),
        ),
        2 => {
            let list: Vec<Value> = (0..5)
                .map(|k| orders::new_buy(&number(i * 5 + k)))
                .collect();
            (
                "batchOrder",
                "POST",
                "/order/api/order/v1/licenseOrder/batchOrder".into(),
                vec![("appKey".into(), "app".into())],
                Some(
                    json!({"channelCode": "CH01", "channelOrderId": format!("CO-{i}"),
                    "syncMode": "sync", "orderList": list}),
                ),
            )
        }
        3 => (
            "addMembers",
            "POST",
            "/me/api/v1/enterprise/EG-000001/member".into(),
            Vec::new(),
            Some(json!({"userList": [{"userName": format!("user{i}"), "password": "x"}]})),
        ),
        _ => (
            "disableLocks",
            "POST",
            "/order/api/order/v1/asset/lock/disable".into(),
            Vec::new(),
            Some(json!({"assetNums": [number(i)]})),
        ),
    }
}

fn har_entry(i: usize) -> Value {
    let (op, method, path, query, body) = exchange(i);
    let mut q = vec![json!({"name": "g_nonce", "value": format!("n{i}")})];
    q.extend(query.iter().map(|(n, v)| json!({"name": n, "value": v})));
    let mut request = json!({"method": method,
        "url": format!("http://127.0.0.1:8080{path}?g_nonce=n{i}"), "queryString": q,
        "headers": [{"name": "content-type", "value": "application/json"}]});
    if let Some(body) = body {
        request["postData"] = json!({"mimeType": "application/json", "text": body.to_string()});
    }
    json!({"request": request, "_operationId": op,
        "response": {"status": 200, "content": {"mimeType": "application/json",
            "text": "{\"code\":0,\"message\":\"success\"}"}}})
}

fn journal_entry(i: usize) -> Value {
    let (op, method, path, query, body) = exchange(i);
    let q: Vec<Value> = query
        .iter()
        .map(|(n, v)| json!({"name": n, "value": v}))
        .collect();
    json!({"seq": i + 1, "time": 0, "operation": op, "method": method, "path": path,
        "query": q, "requestBody": body, "status": 200, "code": "0",
        "replyBody": {"code": 0, "message": "success"}, "durationMs": 0.1})
}

/// Writes `head`, the entries `entry(0..)` while `more` says so, and `tail`.
fn write(path: &Path, head: &str, tail: &str, mut more: impl FnMut(usize, u64) -> Option<Value>) {
    let mut out = BufWriter::new(File::create(path).expect("the file is created"));
    out.write_all(head.as_bytes()).unwrap();
    let (mut i, mut written) = (0, 0u64);
    while let Some(entry) = more(i, written) {
        let text = entry.to_string();
        if i > 0 {
            out.write_all(b",\n").unwrap();
        }
        out.write_all(text.as_bytes()).unwrap();
        written += text.len() as u64 + 2;
        i += 1;
    }
    out.write_all(tail.as_bytes()).unwrap();
    out.flush().unwrap();
    println!("{}: {i} entries, {written} bytes", path.display());
}

fn write_all(dir: &Path, megabytes: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let har = ("{\"log\": {\"version\": \"1.2\", \"entries\": [\n", "]}}\n");
    write(&dir.join("recording.har"), har.0, har.1, |i, _| {
        (i < EXCHANGES).then(|| har_entry(i))
    });
    write(
        &dir.join("journal.json"),
        "{\"capacity\": 10000, \"dropped\": 0, \"entries\": [\n",
        "]}\n",
        |i, _| (i < EXCHANGES).then(|| journal_entry(i)),
    );
    let bound = megabytes * 1_000_000;
    write(&dir.join("large.har"), har.0, har.1, |i, written| {
        (written < bound).then(|| {
            let list: Vec<Value> = (0..100)
                .map(|k| orders::new_buy(&format!("{}", 8_000_000_000u64 + (i * 100 + k) as u64)))
                .collect();
            let body = json!({"channelCode": "CH01", "channelOrderId": format!("CO-{i}"),
                "syncMode": "sync", "orderList": list});
            let mut entry = har_entry(2);
            entry["request"]["postData"]["text"] = json!(body.to_string());
            entry
        })
    });
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--write") {
        let dir = args.get(at + 1).expect("--write DIR [MB]");
        let megabytes = args.get(at + 2).and_then(|m| m.parse().ok()).unwrap_or(200);
        write_all(Path::new(dir), megabytes);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("recording.har");
    write(&har, "{\"log\": {\"entries\": [\n", "]}}\n", |i, _| {
        (i < EXCHANGES).then(|| har_entry(i))
    });
    let catalogue = Catalogue::documents().unwrap();
    let mut runs = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        let mut tally = Tally::new(&catalogue);
        let file = File::open(&har).unwrap();
        exchange::read_from(
            "recording.har",
            file,
            &exchange::Limits::default(),
            &mut |x| {
                tally.add(&x);
            },
        )
        .unwrap();
        let report = tally.report();
        assert_eq!(report.totals.exchanges, EXCHANGES);
        runs.push(start.elapsed().as_secs_f64());
    }
    runs.sort_by(f64::total_cmp);
    let verdict = if runs[2] < TARGET_SECS {
        "met"
    } else {
        "missed"
    };
    println!(
        "coverage of {EXCHANGES} exchanges: median {:.3} s (runs {:.3}-{:.3} s); target under {TARGET_SECS} s: {verdict}",
        runs[1], runs[0], runs[2]
    );
}
