//! The binary (`licensing-proxy`) with a report, a recording and debug logs: no
//! credential or password sent through it appears in any of them, and the recording is
//! started and stopped through the admin API without a restart, with filters.

use std::{
    io::Read,
    process::{Command, Stdio},
};

use licensing_sim::{DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN, Simulator};
use licensing_test_support::process::listening_url;
use serde_json::{Value, json};

use super::support::{read_report, temp_dir};

const APP_KEY: &str = "app-key-7f3a91";
const PASSWORD: &str = "Pass-word-55x";

#[tokio::test]
async fn no_secret_reaches_the_report_the_recording_or_the_logs() {
    let sim = Simulator::start().await.unwrap();
    let dir = temp_dir("secrets");
    let report = dir.path().join("report.jsonl");
    let record = dir.path().join("recording.har");
    let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
        .args(["--addr", "127.0.0.1:0", "--upstream", &sim.url()])
        .arg("--report")
        .arg(&report)
        .arg("--record")
        .arg(&record)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = listening_url(&mut child);
    let http = reqwest::Client::new();
    // The application token in a malformed Authorization header, the app key in the
    // query, a password of the wrong type and one too short.
    let batch = http
        .post(format!("{url}/order/api/order/v1/licenseOrder/batchOrder"))
        .query(&[("g_nonce", "n1"), ("appKey", APP_KEY)])
        .header(
            "authorization",
            format!("Token {}", licensing_sim::DEFAULT_APP_TOKEN),
        )
        .header("content-type", "application/json")
        .body(json!({"channelCode": 7}).to_string())
        .send()
        .await
        .unwrap();
    let counted: u32 = batch.headers()["x-licensing-deviations"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(counted >= 2, "the header and the body at least: {counted}");
    let reset = http
        .put(format!(
            "{url}/me/api/v1/enterprise/EG-1/member/MG-1/resetPassword"
        ))
        .query(&[("g_nonce", "n2")])
        .bearer_auth(DEFAULT_CLIENT_TOKEN)
        .header("clientToken", DEFAULT_CLIENT_TOKEN)
        .header("userToken", DEFAULT_USER_TOKEN)
        .header("content-type", "application/json")
        .body(json!({"password": PASSWORD, "extra": {"password": 5}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), 299);
    let typed = http
        .put(format!(
            "{url}/me/api/v1/enterprise/EG-1/member/MG-1/resetPassword"
        ))
        .query(&[("g_nonce", "n3")])
        .bearer_auth(DEFAULT_CLIENT_TOKEN)
        .header("clientToken", DEFAULT_CLIENT_TOKEN)
        .header("userToken", DEFAULT_USER_TOKEN)
        .header("content-type", "application/json")
        .body(json!({"password": 123456789}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(typed.headers()["x-licensing-deviations"], "1");
    // Recording through the admin API: restarted with a filter, read, stopped.
    let admin = format!("{url}/__sandbox/v1/recording");
    let status: Value = http.get(&admin).send().await.unwrap().json().await.unwrap();
    assert_eq!(
        (status["recording"].clone(), status["entries"].clone()),
        (json!(true), json!(3))
    );
    let first: Value = http
        .get(format!("{admin}/har"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let first_text = first.to_string();
    assert_eq!(first["log"]["entries"][0]["_operationId"], "batchOrder");
    assert!(
        first["log"]["entries"][0]["_deviations"]
            .as_array()
            .unwrap()
            .len()
            >= 2
    );
    let started: Value = http
        .post(&admin)
        .json(&json!({"operations": ["listAssetNums"], "outcomes": ["businessError"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(started["entries"], json!(0));
    for eg in ["EG-404", "EG-405"] {
        super::support::call(&http, &url, "listAssetNums", &[eg], &[], None).await;
    }
    super::support::call(&http, &url, "listLentLocks", &["EG-404"], &[], None).await;
    let har: Value = http
        .delete(&admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(har["log"]["version"], "1.2");
    assert_eq!(entries.len(), 2, "only listAssetNums business errors");
    assert_eq!(entries[0]["_operationId"], "listAssetNums");
    assert_eq!(entries[0]["_outcome"], "businessError");
    assert!(entries[0]["_exchange"].as_str().unwrap().len() > 6);
    let har_text = har.to_string();
    // A web page cannot start a recording.
    let refused = http
        .post(&admin)
        .header("origin", "http://evil.example")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    // SIGTERM: the proxy stops and writes the recording given with --record.
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    );
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let recorded = std::fs::read_to_string(&record).unwrap_or_default();
    let lines = std::fs::read_to_string(&report).unwrap();
    let found = read_report(&report);
    assert!(
        found
            .iter()
            .any(|d| d.pointer == "/headers/Authorization" && d.rule == "constraint"),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|d| d.pointer == "/body/password" && d.rule == "type" && d.actual == "[REDACTED]"),
        "{found:#?}"
    );
    assert!(logs.contains("exchange"), "debug logs were written: {logs}");
    assert!(
        recorded.contains("\"listAssetNums\""),
        "the last recording, written on exit"
    );
    for (what, text) in [
        ("report", &lines),
        ("recording", &first_text),
        ("filtered recording", &har_text),
        ("recording file", &recorded),
        ("logs", &logs),
    ] {
        for secret in [
            APP_KEY,
            PASSWORD,
            "123456789",
            licensing_sim::DEFAULT_APP_TOKEN,
            DEFAULT_CLIENT_TOKEN,
            DEFAULT_USER_TOKEN,
        ] {
            assert!(!text.contains(secret), "{secret} in the {what}:\n{text}");
        }
    }
    assert!(first_text.contains("[REDACTED]"));
}
