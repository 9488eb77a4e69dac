//! What a hostile sweep found (issue 43): the upstream's admin API through the proxy meets
//! the simulator's `Host` and `Origin` rules; the binary does not serve its admin routes
//! open beyond loopback; a browser's own requests are not deviations; text output shows
//! whatever the traffic put in a key escaped; a replay repeats no write unless told to.

use std::process::{Command, Stdio};

use licensing_proxy::{
    Proxy,
    tools::{self, ReplayOptions},
};
use licensing_sim::Simulator;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::{
    raw::{self, Reply},
    support::{self, temp_dir, tokens},
};

async fn status(base: &str, method: Method, path: &str, headers: &[(&str, &str)]) -> StatusCode {
    let mut request = reqwest::Client::new().request(method.clone(), format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if method != Method::GET {
        request = request
            .header("content-type", "application/json")
            .body("{}");
    }
    request.send().await.unwrap().status()
}

/// A request from where the admin API must not be reached: method, path, headers.
type Foreign = (
    Method,
    &'static str,
    &'static [(&'static str, &'static str)],
);

#[tokio::test]
async fn forwarded_admin_routes_meet_the_simulators_host_and_origin_rules() {
    let sim = Simulator::start().await.unwrap();
    licensing_test_support::sim::load_demo(&sim.admin()).await;
    let proxy = Proxy::builder(&sim.url()).start().await.unwrap();
    let foreign: [Foreign; 5] = [
        (
            Method::GET,
            "/__sandbox/v1/state",
            &[("host", "evil.example")],
        ),
        (
            Method::GET,
            "/__sandbox/v1/journal",
            &[("host", "evil.example:80")],
        ),
        (
            Method::POST,
            "/__sandbox/v1/reset",
            &[("origin", "http://evil.example")],
        ),
        (
            Method::PUT,
            "/__sandbox/v1/clock",
            &[("sec-fetch-site", "cross-site")],
        ),
        (
            Method::DELETE,
            "/__sandbox/v1/faults",
            &[("origin", "null")],
        ),
    ];
    for (method, path, headers) in &foreign {
        let direct = status(&sim.url(), method.clone(), path, headers).await;
        let through = status(&proxy.url(), method.clone(), path, headers).await;
        assert_eq!(direct, StatusCode::FORBIDDEN, "{method} {path} {headers:?}");
        assert_eq!(
            through, direct,
            "{method} {path} {headers:?} through the proxy"
        );
    }
    // Nothing was forwarded: the state is whole, and its own names still reach it.
    let state = reqwest::get(format!("{}/__sandbox/v1/state", proxy.url()))
        .await
        .unwrap();
    assert_eq!(state.status(), StatusCode::OK);
    let state: Value = state.json().await.unwrap();
    assert_eq!(state["state"]["enterprises"].as_object().unwrap().len(), 1);

    // With an admin token, the proxy's token guards the upstream's admin API too.
    let guarded = Proxy::builder(&sim.url())
        .admin_token("adm-proxy-43")
        .start()
        .await
        .unwrap();
    let path = "/__sandbox/v1/state";
    assert_eq!(
        status(&guarded.url(), Method::GET, path, &[]).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status(
            &guarded.url(),
            Method::GET,
            path,
            &[("authorization", "Bearer adm-proxy-43")]
        )
        .await,
        StatusCode::OK
    );
}

#[test]
fn the_binary_does_not_serve_its_admin_routes_open_beyond_loopback() {
    let run = |extra: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
            .args(["--upstream", "http://127.0.0.1:9"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Bounded: a binary that went on to serve would never exit by itself.
        let waited = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if waited.elapsed() > std::time::Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{extra:?}: still running after 60 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        (status.code(), err)
    };
    let (code, err) = run(&["--addr", "0.0.0.0:0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--admin-token") && err.contains("--admin-open"),
        "{err}"
    );
    // With the opt-out it goes on to bind: an address of no interface here (TEST-NET-1)
    // fails there, so nothing listens beyond loopback for this test.
    let (code, err) = run(&["--addr", "192.0.2.1:0", "--admin-open"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("--admin-open"), "{err}");
}

#[tokio::test]
async fn a_browsers_own_requests_are_not_deviations() {
    let env = support::start().await;
    let http = reqwest::Client::new();
    for path in ["/favicon.ico", "/robots.txt"] {
        let reply = http
            .get(format!("{}{path}", env.proxy.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.headers()["x-licensing-deviations"], "0", "{path}");
    }
    let unknown = http
        .get(format!("{}/favicon.png", env.proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.headers()["x-licensing-deviations"], "1");
}

/// A recording through the proxy with a key holding a new line and terminal sequences (a
/// field no schema allows, so its pointer is in a deviation), and a recorded reply with
/// one; `report` and `replay` print them escaped.
#[tokio::test]
async fn report_and_replay_show_what_the_traffic_put_in_a_key_escaped() {
    const KEY: &str = "k\nFORGED-LINE \u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m";
    let env = support::start().await;
    env.proxy.recording().start(None, None);
    let order =
        json!({"orderType": "delete_asset", "assets": [{"assetNos": ["8000000001"], KEY: 1}]});
    let body = json!({"channelCode": "CH01", "channelOrderId": "CO-1", "syncMode": "sync", "orderList": [order]});
    let sent = env.call("batchOrder", &[], &[], Some(body)).await;
    assert!(sent.deviations >= 1, "{sent:?}");
    let eg = env.enterprise.clone();
    env.call("listAssetNums", &[&eg], &[], None).await;
    let mut har = env.proxy.recording().stop();
    // The recorded read's reply as a hostile upstream would have sent it: one field more.
    let entries = har["log"]["entries"].as_array_mut().unwrap();
    let text = entries[1]["response"]["content"]["text"].as_str().unwrap();
    let mut reply: Value = serde_json::from_str(text).unwrap();
    reply[KEY] = json!(1);
    entries[1]["response"]["content"]["text"] = reply.to_string().into();
    let dir = temp_dir("forged");
    let file = dir.path().join("forged.har");
    std::fs::write(&file, har.to_string()).unwrap();
    let binary = |args: Vec<String>| {
        let file = file.clone();
        // Off the runtime's thread: the simulator answers the replay meanwhile.
        tokio::task::spawn_blocking(move || {
            let out = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
                .args(args)
                .arg(&file)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.is_empty(), "{err}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
    };
    let report = binary(vec!["report".into()]).await.unwrap();
    let replay = binary(vec!["replay".into(), "--against".into(), env.sim.url()])
        .await
        .unwrap();
    assert!(report.contains("additional-property"), "{report}");
    assert!(replay.contains("shape at /k"), "{replay}");
    for (what, text) in [("report", &report), ("replay", &replay)] {
        assert!(
            text.contains(r"k\nFORGED-LINE \u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m"),
            "{what}: {text}"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("FORGED-LINE")),
            "{what}: a line of its own:\n{text}"
        );
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{what}: a control character:\n{text:?}"
        );
    }
}

#[tokio::test]
async fn a_replay_repeats_no_write_unless_told_to() {
    let env = support::start().await;
    env.proxy.recording().start(None, None);
    let eg = env.enterprise.clone();
    env.call("listAssetNums", &[&eg], &[], None).await;
    env.call("allocateShellNums", &[], &[], Some(json!({"size": 1})))
        .await;
    let order = json!({"channelCode": "CH01", "channelOrderId": "CO-9", "syncMode": "sync", "orderList": []});
    env.call("batchOrder", &[], &[], Some(order)).await;
    env.call(
        "resetMemberPassword",
        &[&eg, &env.member],
        &[],
        Some(json!({"password": "Secret-Pass-9"})),
    )
    .await;
    let dir = temp_dir("writes");
    let file = dir.path().join("writes.har");
    std::fs::write(&file, env.proxy.recording().stop().to_string()).unwrap();
    assert_eq!(
        tools::recorded_writes(&file).unwrap(),
        [
            ("allocateShellNums".to_string(), 1),
            ("batchOrder".to_string(), 1),
            ("resetMemberPassword".to_string(), 1)
        ]
    );

    let journal = |sim: &Simulator| {
        let sim = sim.admin();
        async move {
            let entries = licensing_test_support::sim::journal(&sim).await.entries;
            entries
                .into_iter()
                .filter_map(|e| e.operation)
                .collect::<Vec<_>>()
        }
    };
    let target = Simulator::start().await.unwrap();
    let reads = tools::replay(&file, &target.url(), &tokens(), ReplayOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (reads.sent, reads.writes_skipped),
        (1, 3),
        "{}",
        reads.to_text()
    );
    assert!(reads.to_text().contains("3 recorded writes not repeated"));
    assert_eq!(journal(&target).await, ["listAssetNums"]);
    let all = tools::replay(
        &file,
        &target.url(),
        &tokens(),
        ReplayOptions { writes: true },
    )
    .await
    .unwrap();
    assert_eq!((all.sent, all.writes_skipped), (4, 0));
    let sent = journal(&target).await;
    assert!(sent.iter().any(|op| op == "batchOrder"), "{sent:?}");
    assert!(tools::is_simulator(&target.url()).await);

    // The binary, against something that is not a simulator, with no terminal to ask on:
    // it says what it would repeat, and repeats nothing without --yes.
    let stub = raw::start(|_| Reply::json(404, r#"{"message":"no such path"}"#)).await;
    assert!(!tools::is_simulator(&stub.url).await);
    let probes = stub.answered();
    let replay = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"));
        command
            .args(["replay", "--against", &stub.url])
            .args(args)
            .arg(&file)
            .stdin(Stdio::null());
        // Off the runtime's thread: the stub answers meanwhile.
        tokio::task::spawn_blocking(move || command.output().unwrap())
    };
    let out = replay(&["--writes"]).await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("repeats 3 recorded writes")
            && err.contains("batchOrder x1")
            && err.contains("--yes"),
        "{err}"
    );
    assert_eq!(
        stub.answered(),
        probes + 1,
        "only the probe of its admin API"
    );
    let out = replay(&["--writes", "--yes"]).await.unwrap();
    assert_eq!(out.status.code(), Some(1), "every reply differs");
    assert_eq!(stub.answered(), probes + 1 + 4, "all four sent");
}
