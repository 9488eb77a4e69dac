//! Suspected double submissions on journals as the simulator writes them: a large batch
//! kept only by its size and summary, a batch kept by its size alone, a `channelOrderId`
//! in another enterprise or channel, batches without one, and the list's bound.

use licensing_coverage::{Catalogue, Report, doubles, exchange, render};
use serde_json::{Value, json};

const BATCH: &str = "/order/api/order/v1/licenseOrder/batchOrder";

/// A batch of one `new_buy` order per asset number, for enterprise `eg`.
fn batch(code: Option<&str>, id: Option<&str>, eg: &str, numbers: &[&str]) -> Value {
    let orders: Vec<Value> = numbers
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({"sequence": i + 1, "orderType": "new_buy", "customerId": "C1",
                "enterpriseGlobalId": eg, "licenseType": "softkey",
                "assets": [{"assetNos": [n], "products": []}]})
        })
        .collect();
    let mut body = json!({"syncMode": "sync", "orderList": orders});
    if let Some(code) = code {
        body["channelCode"] = json!(code);
    }
    if let Some(id) = id {
        body["channelOrderId"] = json!(id);
    }
    body
}

/// The body as the journal keeps a large one: its size and its summary.
fn summarised(body: &Value) -> Value {
    let mut summary = body.clone();
    summary.as_object_mut().unwrap().remove("syncMode");
    for order in summary["orderList"].as_array_mut().unwrap() {
        order.as_object_mut().unwrap().remove("licenseType");
        order["assets"][0]
            .as_object_mut()
            .unwrap()
            .remove("products");
    }
    json!({"omitted": 84_576, "summary": summary})
}

fn entry(seq: usize, operation: &str, path: &str, body: Value) -> Value {
    json!({"seq": seq, "operation": operation, "method": "POST", "path": path,
        "query": [], "requestBody": body, "status": 200, "code": "0",
        "replyBody": {"code": 0}})
}

fn report(bodies: &[Value]) -> Report {
    let entries: Vec<Value> = bodies
        .iter()
        .enumerate()
        .map(|(i, b)| entry(i + 1, "batchOrder", BATCH, b.clone()))
        .collect();
    report_of(entries)
}

fn report_of(entries: Vec<Value>) -> Report {
    let journal = json!({"entries": entries});
    let exchanges = exchange::read("j.json", &journal).unwrap();
    Report::new(&Catalogue::documents().unwrap(), &exchanges)
}

fn named(r: &Report) -> Vec<(String, String, String)> {
    r.suspected_double_submissions
        .iter()
        .map(|d| (d.what.clone(), d.first.clone(), d.second.clone()))
        .collect()
}

#[test]
fn large_batches_are_compared_by_their_summaries() {
    let a = batch(
        Some("CH01"),
        Some("CO-A"),
        "EG-1",
        &["8000000001", "8000000002"],
    );
    let b = batch(
        Some("CH01"),
        Some("CO-B"),
        "EG-1",
        &["8000000003", "8000000004"],
    );
    let shells = entry(
        1,
        "allocateShellNums",
        "/order/api/order/v1/shellnums",
        json!({"size": 4}),
    );
    let r = report_of(vec![
        shells,
        entry(2, "batchOrder", BATCH, summarised(&a)),
        entry(3, "batchOrder", BATCH, summarised(&b)),
        entry(4, "batchOrder", BATCH, summarised(&a)),
    ]);
    assert_eq!(
        named(&r),
        [(
            "channelOrderId CO-A".to_string(),
            "j.json#seq 2".to_string(),
            "j.json#seq 4".to_string()
        )]
    );
    assert!(r.doubles_unchecked.is_empty(), "{:?}", r.doubles_unchecked);
    // Resent under a new channelOrderId: its assets are applied again.
    let again = batch(Some("CH01"), Some("CO-C"), "EG-1", &["8000000003"]);
    let r = report(&[summarised(&b), summarised(&again)]);
    assert_eq!(
        named(&r),
        [(
            "new_buy of asset 8000000003".to_string(),
            "j.json#seq 1".to_string(),
            "j.json#seq 2".to_string()
        )]
    );
}

#[test]
fn a_body_kept_by_its_size_alone_is_counted_as_not_checked() {
    let omitted = json!({"omitted": 84_576});
    let r = report(&[omitted.clone(), omitted.clone(), omitted]);
    assert!(named(&r).is_empty(), "{:?}", named(&r));
    assert_eq!(r.doubles_unchecked.get("batchOrder"), Some(&3));
    let note = r.doubles_note().unwrap();
    assert!(
        note.starts_with(
            "3 applied writes could not be checked for double submission (batchOrder 3)"
        ),
        "{note}"
    );
    let md = render::markdown(&r);
    assert!(md.contains(&note), "{md}");
}

#[test]
fn a_channel_order_id_is_one_within_its_channel_and_enterprise() {
    let in_eg = |eg: &str, n: &str| batch(Some("CH01"), Some("CO-A"), eg, &[n]);
    // Another enterprise, another channel: other orders.
    let other_channel = batch(Some("CH02"), Some("CO-A"), "EG-1", &["8000000003"]);
    let r = report(&[
        in_eg("EG-1", "8000000001"),
        in_eg("EG-2", "8000000002"),
        other_channel,
    ]);
    assert!(named(&r).is_empty(), "{:?}", named(&r));
    assert!(r.doubles_unchecked.is_empty());
    // Batches whose enterprises overlap are one order applied twice.
    let both = batch(Some("CH01"), Some("CO-A"), "EG-2", &["8000000009"]);
    let mut both_egs = both.clone();
    both_egs["orderList"][0]["enterpriseGlobalId"] = json!("EG-3");
    both_egs["orderList"]
        .as_array_mut()
        .unwrap()
        .push(in_eg("EG-1", "8000000008")["orderList"][0].clone());
    let r = report(&[in_eg("EG-1", "8000000001"), both_egs]);
    assert_eq!(named(&r)[0].0, "channelOrderId CO-A");
}

#[test]
fn batches_without_a_channel_order_id_are_not_compared_by_it() {
    let r = report(&[
        batch(Some("CH01"), None, "EG-1", &["8000000001"]),
        batch(Some("CH01"), None, "EG-1", &["8000000002"]),
        batch(Some("CH01"), Some(""), "EG-1", &["8000000003"]),
    ]);
    assert!(named(&r).is_empty(), "{:?}", named(&r));
    assert_eq!(r.doubles_unchecked.get("batchOrder"), Some(&3));
    // Their assets are still read: the same asset bought by two of them is a double.
    let r = report(&[
        batch(Some("CH01"), None, "EG-1", &["8000000001"]),
        batch(Some("CH01"), None, "EG-1", &["8000000001"]),
    ]);
    assert_eq!(named(&r)[0].0, "new_buy of asset 8000000001");
}

#[test]
fn locks_and_members_are_read_from_summaries_too() {
    let locks = json!({"omitted": 70_000, "summary": {"assetNums": ["8000000001"]}});
    let users = json!({"omitted": 70_000, "summary": {"userList": [{"userName": "alice"}]}});
    let r = report_of(vec![
        entry(
            1,
            "disableLocks",
            "/order/api/order/v1/asset/lock/disable",
            locks.clone(),
        ),
        entry(
            2,
            "disableLocks",
            "/order/api/order/v1/asset/lock/disable",
            locks,
        ),
        entry(
            3,
            "addMembers",
            "/me/api/v1/enterprise/EG-1/member",
            users.clone(),
        ),
        entry(4, "addMembers", "/me/api/v1/enterprise/EG-1/member", users),
        entry(
            5,
            "addMembers",
            "/me/api/v1/enterprise/EG-1/member",
            json!({"omitted": 70_000}),
        ),
    ]);
    let what: Vec<String> = named(&r).into_iter().map(|d| d.0).collect();
    assert_eq!(what, ["disable of lock 8000000001", "member alice in EG-1"]);
    assert_eq!(r.doubles_unchecked.get("addMembers"), Some(&1));
}

#[test]
fn the_list_is_bounded_and_says_how_many_it_leaves_out() {
    let same = batch(Some("CH01"), Some("CO-A"), "EG-1", &["8000000001"]);
    let bodies = vec![same; doubles::MAX_LISTED + 6];
    let r = report(&bodies);
    assert_eq!(r.suspected_double_submissions.len(), doubles::MAX_LISTED);
    assert_eq!(r.doubles_not_listed, 5);
    let note = r.doubles_note().unwrap();
    assert!(
        note.contains("5 more suspected double submissions were found than the 1000 listed"),
        "{note}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["doublesNotListed"], 5);
}
