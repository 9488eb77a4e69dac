//! A scripted session read as a journal and as a HAR recording: the same counts,
//! never-seen lists and the one suspected double submission, naming both exchanges.

use licensing_coverage::{Catalogue, Minimums, Report, exchange, render};
use serde_json::{Value, json};

/// `(operation, method, path, query, body, status, reply)` of the session, in order.
/// `(operation, method, path, query, body, status, reply)`.
type Call = (
    &'static str,
    &'static str,
    &'static str,
    Value,
    Option<Value>,
    u16,
    Value,
);

fn session() -> Vec<Call> {
    let batch = json!({"channelCode": "CH01", "channelOrderId": "CO-1", "syncMode": "sync",
        "orderList": [{"sequence": 1, "orderType": "new_buy", "customerId": "C1",
            "enterpriseGlobalId": "EG-1", "licenseType": "formal",
            "assets": [{"assetNos": ["8000000001"], "products": []}]}]});
    vec![
        (
            "bindEnterprise",
            "POST",
            "/order/api/order/v1/enterprise/user/bind",
            json!([]),
            Some(json!({"channelCode": "CH01", "channelCustomerId": "CC-42"})),
            200,
            json!({"code": 0}),
        ),
        (
            "queryEnterprise",
            "GET",
            "/order/api/order/v1/enterprise/user/query",
            json!([["channelCode", "CH01"], ["defaultCustomer", "N"]]),
            None,
            200,
            json!({"code": 0}),
        ),
        (
            "allocateShellNums",
            "POST",
            "/order/api/order/v1/shellnums",
            json!([]),
            Some(json!({"size": 1})),
            200,
            json!({"code": "500", "message": "network exception"}),
        ),
        (
            "allocateShellNums",
            "POST",
            "/order/api/order/v1/shellnums",
            json!([]),
            Some(json!({"size": 1})),
            200,
            json!({"code": 0, "data": ["8000000001"]}),
        ),
        (
            "batchOrder",
            "POST",
            "/order/api/order/v1/licenseOrder/batchOrder",
            json!([]),
            Some(batch.clone()),
            200,
            json!({"code": 0}),
        ),
        (
            "listMembers",
            "GET",
            "/me/api/v1/enterprise/EG-1/members",
            json!([["pageNum", "1"], ["pageSize", "2"]]),
            None,
            200,
            json!({"code": 0}),
        ),
        (
            "listMembers",
            "GET",
            "/me/api/v1/enterprise/EG-1/members",
            json!([["pageNum", "2"], ["pageSize", "2"]]),
            None,
            200,
            json!({"code": 0}),
        ),
        (
            "addMembers",
            "POST",
            "/me/api/v1/enterprise/EG-1/member",
            json!([]),
            Some(json!({"userList": []})),
            299,
            json!({"code": "40021", "message": "empty"}),
        ),
        // The bulk run sent again: the same batch, applied a second time.
        (
            "batchOrder",
            "POST",
            "/order/api/order/v1/licenseOrder/batchOrder",
            json!([]),
            Some(batch),
            200,
            json!({"code": 0}),
        ),
    ]
}

fn query(pairs: &Value) -> Vec<Value> {
    let mut out = vec![json!({"name": "g_nonce", "value": "n"})];
    for p in pairs.as_array().unwrap() {
        out.push(json!({"name": p[0], "value": p[1]}));
    }
    out
}

fn journal() -> Value {
    let entries: Vec<Value> = session()
        .into_iter()
        .enumerate()
        .map(|(i, (op, method, path, q, body, status, reply))| {
            let code = licensing_coverage_text(&reply["code"]);
            json!({"seq": i + 1, "operation": op, "method": method, "path": path,
                "query": query(&q), "requestBody": body, "status": status, "code": code,
                "replyBody": reply})
        })
        .collect();
    json!({"entries": entries, "capacity": 1000, "dropped": 0})
}

fn licensing_coverage_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// As the proxy records: no operation named (found by method and path), bodies as text.
fn har() -> Value {
    let entries: Vec<Value> = session()
        .into_iter()
        .map(|(_, method, path, q, body, status, reply)| {
            let mut request = json!({"method": method,
                "url": format!("http://127.0.0.1:8080{path}?g_nonce=n"),
                "queryString": query(&q)});
            if let Some(body) = body {
                request["postData"] =
                    json!({"mimeType": "application/json", "text": body.to_string()});
            }
            json!({"request": request,
                "response": {"status": status, "content": {"text": reply.to_string()}}})
        })
        .collect();
    json!({"log": {"version": "1.2", "entries": entries}})
}

fn report(name: &str, document: &Value) -> Report {
    let exchanges = exchange::read(name, document).unwrap();
    Report::new(&Catalogue::documents().unwrap(), &exchanges)
}

#[test]
fn the_session_counts_the_same_from_the_journal_and_from_a_recording() {
    let from_journal = report("journal.json", &journal());
    let from_har = report("session.har", &har());
    for r in [&from_journal, &from_har] {
        let t = &r.totals;
        assert_eq!((t.exchanges, t.unmatched), (9, 0));
        assert_eq!(
            t.operations.seen, 6,
            "bind, query, allocate, batch, list, add"
        );
        assert_eq!(t.operations.of, licensing_sdk::operations::ALL.len());
        assert_eq!(
            t.codes.seen, 2,
            "500 on allocateShellNums, 40021 on addMembers"
        );
        assert_eq!(t.retries, 1, "allocateShellNums again after its 500");
        assert_eq!(
            (t.paging.seen, t.paging.of),
            (1, 1),
            "listMembers (the one paged list) read page 2"
        );
        let op = |id: &str| r.operations.iter().find(|o| o.operation == id).unwrap();
        assert_eq!(op("batchOrder").calls, 2);
        assert_eq!(op("addMembers").codes_seen.get("40021"), Some(&1));
        assert!(
            op("addMembers")
                .codes_never_seen
                .contains(&"80001".to_string())
        );
        assert_eq!(op("allocateShellNums").succeeded, 1);
        let order_type = op("batchOrder")
            .enums
            .iter()
            .find(|e| e.field == "orderList[].orderType")
            .unwrap();
        assert_eq!(order_type.sent, ["new_buy"]);
        assert_eq!(order_type.never_sent, ["delete_asset", "delete_product"]);
        assert!(
            op("batchOrder")
                .optional_never_sent
                .contains(&"orderList[new_buy].assets[].assetExtendList".to_string())
        );
        assert_eq!(op("listMembers").later_page_read, Some(true));
        assert_eq!(op("listLentLocks").calls, 0);
        assert_eq!(r.suspected_double_submissions.len(), 1);
        let d = &r.suspected_double_submissions[0];
        assert_eq!(
            (d.operation.as_str(), d.what.as_str()),
            ("batchOrder", "channelOrderId CO-1")
        );
    }
    let d = &from_journal.suspected_double_submissions[0];
    assert_eq!(
        (d.first.as_str(), d.second.as_str()),
        ("journal.json#seq 5", "journal.json#seq 9")
    );
    let d = &from_har.suspected_double_submissions[0];
    assert_eq!(
        (d.first.as_str(), d.second.as_str()),
        ("session.har#4", "session.har#8")
    );
    // Merged (the same session twice over): the exchanges add up, the codes seen do not.
    let mut both = exchange::read("journal.json", &journal()).unwrap();
    both.extend(exchange::read("session.har", &har()).unwrap());
    let merged = Report::new(&Catalogue::documents().unwrap(), &both);
    assert_eq!(merged.totals.exchanges, 18);
    // Doubles are found within each recording: the journal's and the HAR's one each, not
    // the journal's batch against the HAR's.
    let doubles: Vec<(&str, &str)> = merged
        .suspected_double_submissions
        .iter()
        .map(|d| (d.first.as_str(), d.second.as_str()))
        .collect();
    assert_eq!(
        doubles,
        [
            ("journal.json#seq 5", "journal.json#seq 9"),
            ("session.har#4", "session.har#8")
        ]
    );
    assert_eq!(merged.totals.codes, from_journal.totals.codes);
}

#[test]
fn minimums_fail_below_and_pass_at_or_above() {
    let r = report("journal.json", &journal());
    let ops = r.totals.operations;
    let exact = format!("operations={}%", ops.fraction() * 100.0);
    assert!(
        exact.parse::<Minimums>().unwrap().missed(&r).is_empty(),
        "{exact}"
    );
    let missed = "operations=100%,codes=1%"
        .parse::<Minimums>()
        .unwrap()
        .missed(&r);
    assert_eq!(missed.len(), 1, "{missed:?}");
    assert!(missed[0].starts_with("operations 6/"), "{}", missed[0]);
    assert!(
        "retries=5%"
            .parse::<Minimums>()
            .unwrap_err()
            .contains("not a total")
    );
    assert!(
        "codes=120%"
            .parse::<Minimums>()
            .unwrap_err()
            .contains("0% to 100%")
    );
    assert!(
        "codes"
            .parse::<Minimums>()
            .unwrap_err()
            .contains("name=percent")
    );
}

#[test]
fn markdown_and_junit_name_what_was_never_exercised() {
    let r = report("journal.json", &journal());
    let md = render::markdown(&r);
    assert!(md.contains("| operations called | 6/"), "{md}");
    assert!(md.contains("- `batchOrder`: `channelOrderId CO-1` applied by `journal.json#seq 5` and again by `journal.json#seq 9`"), "{md}");
    assert!(
        md.contains("`orderList[].orderType` never sent `delete_asset`, `delete_product`"),
        "{md}"
    );
    let xml = render::junit(&r);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
    assert!(
        xml.contains("<testcase classname=\"addMembers\" name=\"code 40021\" time=\"0\"/>"),
        "{xml}"
    );
    assert!(xml.contains("<testcase classname=\"addMembers\" name=\"code 80001\" time=\"0\">\n      <skipped message=\"never answered\"/>"), "{xml}");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["totals"]["operations"]["seen"], 6);
    assert_eq!(
        json["suspectedDoubleSubmissions"][0]["second"],
        "journal.json#seq 9"
    );
}
