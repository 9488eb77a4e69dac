//! A hostile upstream: replies naming ids outside the allow-list, a reply without end,
//! a body that is not JSON, a redirect to another host, a `429`. No write leaves the
//! allow-list, the endless reply is cut at the bound, the redirect is not followed, the
//! `429` is waited for.

use std::{
    io::Write as _,
    net::TcpStream,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use licensing_test_support::raw::RawServer;
use serde_json::json;

use super::{Sim, outcome, report, with_verdict};

/// A request as the hostile server saw it: when, its request line, its body.
type Seen = Arc<Mutex<Vec<(Instant, String, String)>>>;

fn answer(stream: &mut TcpStream, status: &str, extra: &str, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
}

/// What the hostile server answers to `line`.
fn respond(stream: &mut TcpStream, line: &str, members_asked: usize) {
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let ok = |data: serde_json::Value| {
        json!({"code": 0, "message": "success", "data": data}).to_string()
    };
    if path.contains("/enterprise/user/query") {
        answer(
            stream,
            "302 Found",
            "location: http://elsewhere.invalid/steal\r\n",
            "",
        );
    } else if path.contains("/list?") {
        let asset = json!({"id": "VA-9", "assetNum": "OUTSIDE-1", "locked": false});
        answer(stream, "200 OK", "", &ok(json!([asset])));
    } else if path.contains("/members?") && members_asked == 1 {
        answer(stream, "429 Too Many Requests", "retry-after: 1\r\n", "");
    } else if path.contains("/members?") {
        let list = json!({"pageNum": 1, "pageSize": 10, "size": 1, "total": 1, "hasNextPage": false,
            "list": [{"globalId": "MG-OUTSIDE", "userName": "someone@EG-OTHER", "name": "x"}]});
        answer(stream, "200 OK", "", &ok(list));
    } else if path.contains("/assetNums?") {
        // A reply without end: as long as the client reads.
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 104857600\r\n\r\n[",
        );
        let chunk = vec![b' '; 64 * 1024];
        while stream.write_all(&chunk).is_ok() {}
    } else if path.contains("/borrowUsbKeys?") {
        answer(stream, "200 OK", "", "{not json");
    } else if line.starts_with("POST") && path.contains("/member?") {
        let added =
            json!({"succeeded": [{"globalId": "MG-OUTSIDE", "userName": "someone"}], "failed": []});
        answer(stream, "200 OK", "", &ok(added));
    } else if line.starts_with("POST") && path.contains("/asset/") {
        answer(
            stream,
            "200 OK",
            "",
            &ok(json!([{"assetNum": "OUTSIDE-1", "status": 1}])),
        );
    } else if line.starts_with("GET") {
        answer(
            stream,
            "200 OK",
            "",
            &ok(json!([{"assetId": "OUTSIDE-ASSET", "enterpriseGlobalId": "EG-OTHER"}])),
        );
    } else {
        answer(stream, "200 OK", "", &ok(json!(null)));
    }
}

#[test]
fn a_hostile_upstream_gets_no_write_outside_the_allow_list() {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let server = RawServer::start(move |mut stream, request| {
        let line = request.line().to_string();
        let members_asked = {
            let mut seen = record.lock().unwrap();
            seen.push((
                Instant::now(),
                line.clone(),
                String::from_utf8_lossy(&request.body).into_owned(),
            ));
            seen.iter()
                .filter(|(_, l, _)| l.contains("/members?"))
                .count()
        };
        respond(&mut stream, &line, members_asked);
    });
    let sim = Sim::start();
    let output = sim
        .probe()
        .args([
            "--writes",
            "--enterprise",
            "EG-ALLOWED",
            "--asset",
            "8000000009",
        ])
        .args([
            "--channel-code",
            "CH01",
            "--channel-customer-id",
            "CC-1",
            "-o",
            "json",
            "--ledger",
        ])
        .arg(sim.path("hostile.ledger"))
        .env("LICENSING_ORDER_URL", &server.url)
        .env("LICENSING_MEMBER_URL", &server.url)
        .output()
        .unwrap();
    let (report, code) = report(&output);
    // The upstream said it added the probe employee, then listed no employee the probe can
    // tell is its own: the add is left to `--finish`, and nothing is deleted.
    assert_eq!(code, Some(3), "{report:#}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--finish"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = seen.lock().unwrap();
    for (_, line, body) in seen.iter() {
        assert!(!line.contains("elsewhere.invalid"), "{line}");
        if line.starts_with("GET") {
            continue;
        }
        for outside in ["MG-OUTSIDE", "OUTSIDE-1", "EG-OTHER", "OUTSIDE-ASSET"] {
            assert!(
                !line.contains(outside) && !body.contains(outside),
                "a write to {outside}: {line} {body}"
            );
        }
        assert!(
            line.contains("EG-ALLOWED") || body.contains("probe-no-such-lock-"),
            "a write outside the allow-list: {line} {body}"
        );
    }
    let redirect = outcome(&report, "queryEnterprise.reply");
    assert_eq!(redirect["verdict"], "departs");
    assert!(
        redirect["why"].as_str().unwrap().contains("redirect"),
        "{redirect}"
    );
    let endless = outcome(&report, "listAssetNums.reply");
    assert_eq!(endless["verdict"], "not_run", "{endless}");
    assert!(
        endless["why"]
            .as_str()
            .unwrap()
            .contains("--max-reply-bytes"),
        "{endless}"
    );
    assert_eq!(
        outcome(&report, "listLentLocks.reply")["verdict"],
        "departs"
    );
    // The lock the upstream offered is not on the allow-list: never disabled.
    assert_eq!(
        outcome(&report, "order.lock.round-trip")["verdict"],
        "not_run"
    );
    assert!(with_verdict(&report, "departs").contains(&"order.lock.unknown-status-2".to_string()));
    // The 429 was waited for, as its Retry-After said, and the request sent again.
    let members: Vec<Instant> = seen
        .iter()
        .filter(|(_, l, _)| l.contains("/members?"))
        .map(|(t, _, _)| *t)
        .collect();
    assert!(members.len() >= 2);
    assert!(members[1] - members[0] >= Duration::from_secs(1));
}
