//! Memory per body: the binary, as a child process, checks a 10 MiB request and a 30 MiB
//! reply (each departing from the documents all along) with its peak resident memory
//! (`VmHWM`) growing by at most 4 times the body; a body over the check budget is
//! forwarded unchanged with one `not-checked` deviation; replies that do not fit are handed
//! on as they arrive, never held whole, so many at once stay within the budget.

use std::process::{Child, Command, Stdio};

use licensing_sim::{DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN};
use licensing_test_support::process::listening_url;

use super::{
    raw::{self, Reply},
    support::{read_report, temp_dir},
};

const MIB: usize = 1024 * 1024;

/// `{"code":0,"message":"success","data":[0,0,…]}` of `size` bytes: every item of `data`
/// departs (an asset is an object); as a `serde_json::Value` it would take about 16 times
/// its size.
fn zeros(size: usize, field: &str) -> Vec<u8> {
    let head = format!(r#"{{"code":0,"message":"success","{field}":["#);
    let items = (size - head.len() - 3) / 2;
    let mut body = Vec::with_capacity(size);
    body.extend_from_slice(head.as_bytes());
    body.extend(std::iter::repeat_n(b"0,".as_slice(), items).flatten());
    body.extend_from_slice(b"0]}");
    body
}

/// The binary with `args`, and its base URL once it listens.
struct Running(Child, String);

impl Running {
    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
            .args(["--addr", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = listening_url(&mut child);
        Self(child, url)
    }

    /// The process's peak resident memory so far, in bytes.
    /// `assetNums` of the enterprise `eg`, through the proxy.
    fn assets(&self, eg: &str) -> String {
        format!("{}/me/api/v1/enterprise/{eg}/asset/assetNums", self.1)
    }

    /// The peak after three calls: what the first exchange sets up once is not a body's.
    async fn warmed_peak(&self, http: &reqwest::Client) -> usize {
        for _ in 0..3 {
            let warm = member_call(http, &self.assets("EG-1"))
                .send()
                .await
                .unwrap();
            assert_eq!(deviations(&warm), 0);
        }
        self.peak()
    }

    fn peak(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).unwrap();
        let kib: usize = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/PID/status");
        kib * 1024
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn member_call(http: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    http.get(url)
        .query(&[("g_nonce", "n-1")])
        .bearer_auth(DEFAULT_CLIENT_TOKEN)
        .header("clientToken", DEFAULT_CLIENT_TOKEN)
        .header("userToken", DEFAULT_USER_TOKEN)
}

fn deviations(reply: &reqwest::Response) -> usize {
    reply.headers()["x-licensing-deviations"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_large_body_is_checked_within_four_times_its_size() {
    let big = std::sync::Arc::new(zeros(30 * MIB, "data"));
    let served = std::sync::Arc::clone(&big);
    let stub = raw::start(move |request| {
        if request.line().contains("EG-BIG") {
            Reply::json(200, served.as_slice())
        } else {
            Reply::json(200, r#"{"code":0,"message":"success","data":[]}"#)
        }
    })
    .await;
    let dir = temp_dir("memory");
    let report = dir.path().join("report.jsonl");
    let proxy = Running::start(&[
        "--upstream",
        &stub.url,
        "--report",
        report.to_str().unwrap(),
    ]);
    let http = reqwest::Client::new();
    let idle = proxy.warmed_peak(&http).await;

    let request = zeros(10 * MIB, "orderList");
    let sent = http
        .post(format!(
            "{}/order/api/order/v1/licenseOrder/batchOrder",
            proxy.1
        ))
        .query(&[("g_nonce", "n-2")])
        .bearer_auth(DEFAULT_APP_TOKEN)
        .header("content-type", "application/json")
        .body(request)
        .send()
        .await
        .unwrap();
    let found = deviations(&sent);
    assert!((2..=200).contains(&found), "checked: {found} deviations");
    let after_request = proxy.peak();

    let reply = member_call(&http, &proxy.assets("EG-BIG"))
        .send()
        .await
        .unwrap();
    let found = deviations(&reply);
    let body = reply.bytes().await.unwrap();
    assert_eq!(body.len(), big.len(), "forwarded whole");
    assert!(body[..] == big[..], "forwarded unchanged");
    assert!((1..=100).contains(&found), "checked: {found} deviations");
    let after_reply = proxy.peak();

    let request_growth = after_request.saturating_sub(idle) as f64 / (10 * MIB) as f64;
    let reply_growth = after_reply.saturating_sub(idle) as f64 / (30 * MIB) as f64;
    eprintln!(
        "peak {} MiB idle; growth {request_growth:.2}x a 10 MiB request, \
         {reply_growth:.2}x a 30 MiB reply",
        idle / MIB
    );
    assert!(
        request_growth <= 4.0,
        "a 10 MiB request: {request_growth:.2}x"
    );
    assert!(reply_growth <= 4.0, "a 30 MiB reply: {reply_growth:.2}x");
    // The reply was held whole once: the measure sees it.
    assert!(
        reply_growth >= 0.9,
        "{reply_growth:.2}x: not the proxy's memory?"
    );
    let lines = read_report(&report);
    assert!(lines.iter().all(|d| d.rule != "not-checked"), "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|d| d.pointer == "/data/0" && d.rule == "type")
    );
    assert!(lines.iter().any(|d| d.pointer == "/body/orderList/0"));
}

#[tokio::test]
async fn a_body_over_the_check_budget_is_forwarded_unchecked() {
    let big = std::sync::Arc::new(zeros(2 * MIB, "data"));
    let served = std::sync::Arc::clone(&big);
    let stub = raw::start(move |_| Reply::json(200, served.as_slice())).await;
    let proxy = licensing_proxy::Proxy::builder(&stub.url)
        .check_budget(MIB)
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let url = format!("{}/me/api/v1/enterprise/EG-1/asset/assetNums", proxy.url());
    let reply = member_call(&http, &url).send().await.unwrap();
    assert_eq!(reply.status(), 200);
    assert_eq!(deviations(&reply), 1);
    let body = reply.bytes().await.unwrap();
    assert!(body[..] == big[..], "forwarded unchanged");
    let found = proxy.deviations().deviations();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].rule.as_str(), found[0].pointer.as_str()),
        ("not-checked", "")
    );
    assert!(
        found[0].actual.starts_with("over budget"),
        "{}",
        found[0].actual
    );
    assert!(found[0].expected.contains("--check-budget-mib"));
    // A request over the budget: its body unchecked, the rest of it checked.
    let sent = http
        .post(format!(
            "{}/order/api/order/v1/licenseOrder/batchOrder",
            proxy.url()
        ))
        .query(&[("g_nonce", "n-3")])
        .header("content-type", "application/json")
        .body(zeros(2 * MIB, "orderList"))
        .send()
        .await
        .unwrap();
    let rules: Vec<(String, String)> = proxy
        .deviations()
        .deviations()
        .into_iter()
        .skip(1)
        .map(|d| (d.pointer, d.rule))
        .collect();
    assert!(deviations(&sent) >= 2, "{rules:?}");
    assert!(
        rules.contains(&(String::new(), "not-checked".into()))
            && rules.contains(&("/headers/Authorization".into(), "required".into())),
        "{rules:?}"
    );
    assert!(
        !rules.iter().any(|(p, _)| p.starts_with("/body/")),
        "{rules:?}"
    );
    assert_eq!(
        proxy.not_checked(),
        3,
        "the reply, the request and its reply"
    );
}

/// Eight 16 MiB replies at once through a proxy whose check budget is 8 MiB, half of them
/// of declared length and half chunked: each reaches its client whole and unchanged with
/// one `not-checked` deviation, and the proxy never holds them (its peak grows by far less
/// than the 128 MiB they add up to).
#[tokio::test]
async fn replies_that_do_not_fit_are_handed_on_as_they_arrive() {
    const REPLIES: usize = 8;
    let big = std::sync::Arc::new(zeros(16 * MIB, "data"));
    let served = std::sync::Arc::clone(&big);
    let stub = raw::start(move |request| {
        if request.line().contains("EG-BIG") {
            let reply = Reply::json(200, served.as_slice());
            if request.line().contains("CHUNKED") {
                reply.chunked()
            } else {
                reply
            }
        } else {
            Reply::json(200, r#"{"code":0,"message":"success","data":[]}"#)
        }
    })
    .await;
    let proxy = Running::start(&["--upstream", &stub.url, "--check-budget-mib", "8"]);
    let http = reqwest::Client::new();
    let idle = proxy.warmed_peak(&http).await;

    let calls = (0..REPLIES).map(|i| {
        let http = http.clone();
        let url = proxy.assets(if i % 2 == 1 {
            "EG-BIG-CHUNKED"
        } else {
            "EG-BIG"
        });
        async move {
            let reply = member_call(&http, &url).send().await.unwrap();
            let found = deviations(&reply);
            (found, reply.bytes().await.unwrap())
        }
    });
    let replies = futures_util::future::join_all(calls).await;
    let growth = proxy.peak().saturating_sub(idle);
    for (found, body) in &replies {
        assert_eq!(body.len(), big.len(), "forwarded whole");
        assert!(body[..] == big[..], "forwarded unchanged");
        assert_eq!(*found, 1, "one not-checked deviation");
    }
    eprintln!(
        "{REPLIES} replies of 16 MiB at once, check budget 8 MiB: peak grew by {} MiB",
        growth / MIB
    );
    // Held whole, they would take 128 MiB. What may be held: the budget's 8 MiB (the start
    // of a chunked reply, read before it stopped fitting, kept until sent) and, per
    // connection, the pieces queued for the client (hyper's write queue takes up to 16, of
    // up to its 400 KiB read buffer each): 8 + 8 × 6.6 MiB at worst, about 4 each measured.
    assert!(growth < 64 * MIB, "peak grew by {} MiB", growth / MIB);
}
