//! What reading a recording costs in heap, counted by the allocator of this test binary:
//! a large file of small entries costs what one entry costs, whatever the file's size;
//! one large entry costs about twice itself.

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::Path,
    sync::Mutex,
};

use licensing_coverage::{Catalogue, Tally, exchange};
use licensing_test_support::{heap::Heap, orders};
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: licensing_test_support::heap::Counting = licensing_test_support::heap::Counting;

/// One measurement at a time: the counter is the process's.
static MEASURING: Mutex<()> = Mutex::new(());

const MIB: usize = 1024 * 1024;

/// A HAR entry of a batch of `orders` orders, applied.
fn har_entry(orders: usize, id: &str) -> Value {
    let list: Vec<Value> = (0..orders)
        .map(|i| orders::new_buy(&format!("{}", 8_000_000_000u64 + i as u64)))
        .collect();
    let body = json!({"channelCode": "CH01", "channelOrderId": id, "syncMode": "sync",
        "orderList": list});
    json!({"request": {"method": "POST",
            "url": "http://127.0.0.1:8080/order/api/order/v1/licenseOrder/batchOrder?g_nonce=n&appKey=app",
            "queryString": [{"name": "g_nonce", "value": "n"}, {"name": "appKey", "value": "app"}],
            "headers": [{"name": "content-type", "value": "application/json"}],
            "postData": {"mimeType": "application/json", "text": body.to_string()}},
        "response": {"status": 200, "content": {"mimeType": "application/json",
            "text": "{\"code\":0,\"message\":\"success\",\"data\":[]}"}},
        "_operationId": "batchOrder"})
}

/// Writes a HAR of `entry` repeated until the file has `bytes`; the entries written.
fn write_har(path: &Path, entry: &Value, bytes: usize) -> usize {
    let text = entry.to_string();
    let mut out = BufWriter::new(File::create(path).unwrap());
    out.write_all(b"{\"log\": {\"version\": \"1.2\", \"entries\": [")
        .unwrap();
    let mut n = 0;
    while n * (text.len() + 1) < bytes {
        if n > 0 {
            out.write_all(b",").unwrap();
        }
        out.write_all(text.as_bytes()).unwrap();
        n += 1;
    }
    out.write_all(b"]}}").unwrap();
    out.flush().unwrap();
    n
}

/// The heap's peak above where it started while `path` is read and reported on.
fn peak_reading(path: &Path, catalogue: &Catalogue) -> (usize, licensing_coverage::Report) {
    let heap = Heap::start();
    let mut tally = Tally::new(catalogue);
    let file = File::open(path).unwrap();
    exchange::read_from("r.har", file, &exchange::Limits::default(), &mut |x| {
        tally.add(&x);
    })
    .unwrap();
    let report = tally.report();
    (heap.peak(), report)
}

#[test]
fn a_large_recording_of_small_entries_costs_what_one_entry_costs() {
    let (_one, catalogue, dir) = measuring();
    let (small, large) = (dir.path().join("small.har"), dir.path().join("large.har"));
    let entry = har_entry(3, "CO-1");
    let few = write_har(&small, &entry, MIB);
    let many = write_har(&large, &entry, 50 * MIB);
    let (small_peak, small_report) = peak_reading(&small, &catalogue);
    let (large_peak, large_report) = peak_reading(&large, &catalogue);
    assert_eq!(small_report.totals.exchanges, few);
    assert_eq!(large_report.totals.exchanges, many);
    // Every entry the same batch: each a double of the one before, a thousand listed.
    assert_eq!(
        large_report.suspected_double_submissions.len() + large_report.doubles_not_listed,
        many - 1
    );
    // The large file holds 50 times the entries of the small one: its peak is the small
    // one's plus the longer list of doubles (a thousand, about 200 bytes each), not 50
    // times it.
    eprintln!("{few} entries: peak {small_peak} bytes; {many} entries: peak {large_peak} bytes");
    assert!(
        large_peak < small_peak + MIB,
        "{many} entries: peak {large_peak} bytes, against {small_peak} for {few}"
    );
    assert!(large_peak < 2 * MIB, "peak {large_peak} bytes");
}

/// One measurement at a time (the heap is the process's), the documents' catalogue, and a
/// directory for the recordings.
fn measuring() -> (
    std::sync::MutexGuard<'static, ()>,
    Catalogue,
    tempfile::TempDir,
) {
    let one = MEASURING.lock().unwrap();
    (
        one,
        Catalogue::documents().unwrap(),
        tempfile::tempdir().unwrap(),
    )
}

/// Reading `path`, whose largest entry (`what`) is `bytes` long, finds its `exchanges` at a
/// peak under twice the entry and 2 MiB.
fn at_most_twice(what: &str, bytes: usize, path: &Path, catalogue: &Catalogue, exchanges: usize) {
    let (peak, report) = peak_reading(path, catalogue);
    eprintln!("{what} of {bytes} bytes: peak {peak} bytes");
    assert_eq!(report.totals.exchanges, exchanges);
    let limit = 2 * bytes + 2 * MIB;
    assert!(
        peak < limit,
        "{what} of {bytes} bytes: peak {peak} bytes, more than {limit}"
    );
}

#[test]
fn one_large_entry_costs_about_twice_itself() {
    let (_one, catalogue, dir) = measuring();
    let path = dir.path().join("one.har");
    // About 10 MiB of batch in one entry, and one more entry after it.
    let big = har_entry(14_000, "CO-BIG").to_string();
    let small = har_entry(1, "CO-SMALL").to_string();
    std::fs::write(
        &path,
        format!("{{\"log\": {{\"entries\": [{big}, {small}]}}}}"),
    )
    .unwrap();
    at_most_twice("a HAR entry", big.len(), &path, &catalogue, 2);
    // The journal's shape: the body as JSON, not as a string.
    let body: Value = serde_json::from_str(
        json!(serde_json::from_str::<Value>(&big).unwrap()["request"]["postData"]["text"])
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let entry = json!({"seq": 1, "operation": "batchOrder", "method": "POST",
        "path": "/order/api/order/v1/licenseOrder/batchOrder", "requestBody": body,
        "status": 200, "code": "0"})
    .to_string();
    let journal = dir.path().join("journal.json");
    std::fs::write(&journal, format!("{{\"entries\": [{entry}]}}")).unwrap();
    at_most_twice("a journal entry", entry.len(), &journal, &catalogue, 1);
}

#[test]
fn the_double_check_remembers_about_100_bytes_a_key() {
    let (_one, catalogue, dir) = measuring();
    let path = dir.path().join("locks.json");
    // 200 disables of 1,000 locks each, every lock another.
    let (entries, per) = (200, 1000);
    let list: Vec<String> = (0..entries)
        .map(|e| {
            let locks: Vec<String> = (0..per)
                .map(|k| format!("{}", 8_000_000_000u64 + (e * per + k) as u64))
                .collect();
            json!({"seq": e + 1, "operation": "disableLocks", "method": "POST",
                "path": "/order/api/order/v1/asset/lock/disable",
                "requestBody": {"assetNums": locks}, "status": 200, "code": "0"})
            .to_string()
        })
        .collect();
    std::fs::write(&path, format!("{{\"entries\": [{}]}}", list.join(","))).unwrap();
    let (peak, report) = peak_reading(&path, &catalogue);
    assert!(report.suspected_double_submissions.is_empty());
    let keys = entries * per;
    eprintln!("{keys} keys: peak {peak} bytes, {} a key", peak / keys);
    assert!(peak / keys < 128, "{} bytes a key", peak / keys);
}
