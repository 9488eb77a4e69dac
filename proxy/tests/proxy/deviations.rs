//! The simulator as upstream: faithful traffic shows no deviation; each kind of break a
//! fault rule makes is reported once, with its operation, direction and pointer.

use licensing_proxy::{Deviation, Direction};
use licensing_sim::admin::types::{Fault, FaultKind};
use licensing_test_support::sim::{journal_of, new_buy, product, simulator};
use serde_json::json;

use super::support::{self, read_report};

fn summary(d: &[Deviation]) -> Vec<(String, &'static str, String, String)> {
    d.iter()
        .map(|d| {
            (
                d.operation_id.clone().unwrap_or_default(),
                match d.direction {
                    Direction::Request => "request",
                    Direction::Reply => "reply",
                },
                d.pointer.clone(),
                d.rule.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn traffic_as_documented_shows_no_deviation() {
    let env = support::start().await;
    let replies = env.traffic(&env.proxy.url()).await;
    assert_eq!(replies.len(), 12);
    for r in &replies {
        assert_eq!(r.deviations, 0, "{r:?}");
        assert!(!r.exchange.is_empty());
    }
    // Successes and business errors both went through.
    assert_eq!(replies[0].body["code"], json!(0));
    assert_eq!(replies[10].body["code"], json!("60002"));
    assert_eq!(replies[10].status, 299);
    let ids: std::collections::HashSet<&str> =
        replies.iter().map(|r| r.exchange.as_str()).collect();
    assert_eq!(ids.len(), replies.len(), "every exchange has its own id");
    assert_eq!(env.deviations(), Vec::<Deviation>::new());
}

#[tokio::test]
async fn each_break_is_reported_once_with_its_pointer() {
    let env = support::start().await;
    env.patch(
        "listAssetNums",
        json!([{"op": "replace", "path": "/code", "value": "99999"}]),
    )
    .await;
    env.patch(
        "listMembers",
        json!([{"op": "remove", "path": "/data/list/0/userName"}]),
    )
    .await;
    env.patch(
        "listLentLocks",
        json!([{"op": "replace", "path": "/data/0/borrowedFlag", "value": null}]),
    )
    .await;
    env.patch("listAssetProducts", json!([{"op": "replace", "path": "/data/productInstanceList/0/limitType", "value": "quantum"}]))
        .await;
    env.fault(
        "listVirtualAssets",
        Fault::builder().kind(FaultKind::Status).status(Some(418)),
    )
    .await;
    let replies = env.traffic(&env.proxy.url()).await;
    let found = env.deviations();
    let got = summary(&found);
    let want = [
        ("listMembers", "/data/list/0/userName", "required"),
        ("listAssetNums", "/code", "undocumented-code"),
        ("listLentLocks", "/data/0/borrowedFlag", "type"),
        (
            "listAssetProducts",
            "/data/productInstanceList/0/limitType",
            "enum",
        ),
        ("listVirtualAssets", "", "http-status"),
        // The second listAssetNums (an unknown enterprise) answers 60017, replaced too.
        ("listAssetNums", "/code", "undocumented-code"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(op, p, r)| (op.to_string(), "reply", p.to_string(), r.to_string()))
            .collect::<Vec<_>>(),
        "{found:#?}"
    );
    let by_op = |op: &str| {
        found
            .iter()
            .find(|d| d.operation_id.as_deref() == Some(op))
            .unwrap()
    };
    assert_eq!(by_op("listAssetNums").actual, "\"99999\"");
    assert!(
        by_op("listAssetNums").expected.contains("\"60017\""),
        "{}",
        by_op("listAssetNums").expected
    );
    assert_eq!(by_op("listLentLocks").expected, "boolean");
    assert_eq!(
        by_op("listLentLocks").actual,
        "null",
        "a patch may write null"
    );
    assert_eq!(
        by_op("listAssetProducts").expected,
        "one of [\"basic\", \"feature\"]"
    );
    assert_eq!(by_op("listAssetProducts").actual, "\"quantum\"");
    assert_eq!(by_op("listVirtualAssets").expected, "one of [200, 299]");
    assert_eq!(by_op("listVirtualAssets").actual, "418");
    // The headers count them, and each line names the exchange that carried it.
    assert_eq!(replies[0].deviations, 1);
    assert_eq!(replies[0].exchange, by_op("listMembers").exchange);
    assert_eq!(
        replies[4].status, 418,
        "the upstream's reply is forwarded as it was"
    );
    assert_eq!(replies[5].deviations, 0);
    for d in &found {
        chrono::DateTime::parse_from_rfc3339(&d.time).unwrap();
    }
}

#[tokio::test]
async fn requests_are_checked_too_and_forwarded_unchanged() {
    let env = support::start().await;
    let eg = env.enterprise.clone();
    // pageNum missing and pageSize zero; the upstream answers what it answers.
    let r = env
        .call("listMembers", &[&eg], &[("pageSize", "0")], None)
        .await;
    assert_eq!(r.body["code"], json!("40000"), "forwarded as sent: {r:?}");
    // A body field of the wrong type, and an unknown path.
    let r2 = env
        .call("allocateShellNums", &[], &[], Some(json!({"size": "two"})))
        .await;
    assert_eq!(r2.body["code"], json!("13004"));
    let found = env.deviations();
    let got = summary(&found);
    assert_eq!(
        got,
        [
            ("listMembers", "request", "/query/pageNum", "required"),
            ("listMembers", "request", "/query/pageSize", "constraint"),
            ("allocateShellNums", "request", "/body/size", "type"),
        ]
        .map(|(a, b, c, d)| (a.to_string(), b, c.to_string(), d.to_string()))
    );
    assert_eq!(r.deviations, 2);
    let reply = reqwest::get(format!("{}/order/api/order/v1/nothing", env.proxy.url()))
        .await
        .unwrap();
    assert_eq!(reply.status(), 404, "the upstream's answer");
    assert_eq!(reply.headers()["x-licensing-deviations"], "1");
    let last = read_report(&env.report).pop().unwrap();
    assert_eq!(
        (last.operation_id, last.rule.as_str()),
        (None, "unknown-operation")
    );
}

#[tokio::test]
async fn strict_mode_answers_an_error_naming_the_deviation() {
    let env = support::start_with(|b| b.strict(true)).await;
    env.patch(
        "listLentLocks",
        json!([{"op": "remove", "path": "/data/0/assetNum"}]),
    )
    .await;
    let eg = env.enterprise.clone();
    let r = env.call("listLentLocks", &[&eg], &[], None).await;
    assert_eq!(r.status, 502);
    let message = r.body["message"].as_str().unwrap();
    assert!(
        message.contains("listLentLocks") && message.contains("/data/0/assetNum required"),
        "{message}"
    );
    assert_eq!(r.body["deviations"][0]["pointer"], "/data/0/assetNum");
    assert_eq!(r.body["exchange"], json!(r.exchange));
    // A faithful reply passes through strict mode untouched.
    let ok = env.call("listAssetNums", &[&eg], &[], None).await;
    assert_eq!((ok.status, ok.deviations), (200, 0));
    assert_eq!(ok.body["code"], json!(0));
}

#[tokio::test]
async fn upstream_bounds_answer_clear_errors() {
    let env = support::start_with(|b| {
        b.max_reply_bytes(64)
            .timeout(std::time::Duration::from_millis(500))
    })
    .await;
    let eg = env.enterprise.clone();
    let big = env.call("listAssetNums", &[&eg], &[], None).await;
    assert_eq!(big.status, 502);
    assert!(big.message().contains("larger than 64 bytes"), "{big:?}");
    env.fault(
        "listLentLocks",
        Fault::builder().kind(FaultKind::Delay).ms(Some(3_000)),
    )
    .await;
    let slow = env.call("listLentLocks", &[&eg], &[], None).await;
    assert_eq!(slow.status, 504, "{slow:?}");
    assert!(slow.message().contains("--timeout-secs"), "{slow:?}");
    // An upstream that is not there.
    let gone = licensing_proxy::Proxy::builder("http://127.0.0.1:9")
        .start()
        .await
        .unwrap();
    let r = support::call(
        &reqwest::Client::new(),
        &gone.url(),
        "listAssetNums",
        &[&eg],
        &[],
        None,
    )
    .await;
    assert_eq!(r.status, 502);
    assert!(r.message().contains("cannot be reached"), "{r:?}");
}

#[tokio::test]
async fn the_client_side_has_the_simulators_bounds() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let env = support::start_with(|b| {
        b.client_timeouts(
            Duration::from_secs(1),
            Duration::from_secs(1),
            Duration::from_secs(5),
        )
        .body_budget(1024)
    })
    .await;
    // Headers that never end: the connection is closed after the header timeout.
    let mut tcp = tokio::net::TcpStream::connect(env.proxy.addr())
        .await
        .unwrap();
    tcp.write_all(b"GET /me/api/v1/enterprise/EG-1/asset/assetNums HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut rest))
        .await
        .expect("closed by the proxy")
        .unwrap_or(0);
    assert_eq!(read, 0, "no reply to half a request");
    assert!(started.elapsed() < Duration::from_secs(4));
    // A body over the budget is not read, and not forwarded.
    let r = env
        .call(
            "allocateShellNums",
            &[],
            &[],
            Some(json!({"size": 1, "pad": "x".repeat(4096)})),
        )
        .await;
    assert_eq!(r.status, 503, "{r:?}");
    assert!(
        r.body["message"].as_str().unwrap().contains("not read"),
        "{r:?}"
    );
    let journal = journal_of(&env.sim.admin(), "allocateShellNums").await;
    assert!(journal.entries.is_empty(), "the upstream never saw it");
}

#[tokio::test]
async fn one_upstream_connection_is_kept_and_one_the_upstream_closed_is_replaced() {
    let sim = simulator(
        licensing_sim::Simulator::builder().idle_timeout(std::time::Duration::from_millis(300)),
    )
    .await;
    let proxy = licensing_proxy::Proxy::builder(&sim.url())
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let base = proxy.url();
    let allocate = || {
        support::call(
            &http,
            &base,
            "allocateShellNums",
            &[],
            &[],
            Some(json!({"size": 1})),
        )
    };
    for _ in 0..20 {
        let r = allocate().await;
        assert_eq!((r.status, r.deviations), (200, 0), "{r:?}");
    }
    assert_eq!(
        sim.stats().connections,
        1,
        "twenty calls, one after another, over one upstream connection"
    );
    // The upstream closes the idle connection; the next call goes over a new one, once.
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert_eq!(sim.stats().connections, 0);
    let r = allocate().await;
    assert_eq!((r.status, r.deviations), (200, 0), "{r:?}");
    assert_eq!(sim.stats().connections, 1);
}

#[tokio::test]
async fn a_batch_order_is_checked_against_the_branch_its_order_type_names() {
    let env = support::start().await;
    // The order the simulator's tests send, for the demo enterprise.
    let acme = licensing_test_support::sim::Enterprise {
        global_id: env.enterprise.clone(),
        customer_id: "C-1".into(),
        channel_customer_id: "CC-ACME".into(),
        members: Vec::new(),
    };
    let assets = json!([{"assetNos": ["8000000001"], "products": [product("base", 1)]}]);
    let order = new_buy(&acme, "normal_recover_usbkey", assets);
    let batch = |order: serde_json::Value| json!({"channelCode": "CH01", "channelOrderId": "CO-1", "syncMode": "sync", "orderList": [order]});
    let faithful = env
        .call(
            "batchOrder",
            &[],
            &[("appKey", "app")],
            Some(batch(order.clone())),
        )
        .await;
    assert_eq!(
        faithful.deviations,
        0,
        "{faithful:?} {:#?}",
        env.deviations()
    );
    let mut broken = order;
    broken["assets"][0]["products"][0]["limitConcurrent"] = json!("one");
    let r = env
        .call("batchOrder", &[], &[("appKey", "app")], Some(batch(broken)))
        .await;
    let found = env.deviations();
    assert_eq!(
        summary(&found),
        [(
            "batchOrder".to_string(),
            "request",
            "/body/orderList/0/assets/0/products/0/limitConcurrent".to_string(),
            "type".to_string()
        )],
        "{r:?}"
    );
}
