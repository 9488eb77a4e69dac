//! The binary (`licensing-proxy`) with a report, a recording and debug logs: no
//! credential or password sent through it appears in any of them, and the recording is
//! started and stopped through the admin API without a restart, with filters.

use licensing_sim::{DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN, Simulator};
use serde_json::{Value, json};

use super::support::{Logged, read_report};

const APP_KEY: &str = "app-key-7f3a91";
const PASSWORD: &str = "Pass-word-55x";

/// `resetPassword` through the proxy at `url` with the member center's credentials.
async fn reset_password(
    http: &reqwest::Client,
    url: &str,
    nonce: &str,
    body: Value,
) -> reqwest::Response {
    http.put(format!(
        "{url}/me/api/v1/enterprise/EG-1/member/MG-1/resetPassword"
    ))
    .query(&[("g_nonce", nonce)])
    .bearer_auth(DEFAULT_CLIENT_TOKEN)
    .header("clientToken", DEFAULT_CLIENT_TOKEN)
    .header("userToken", DEFAULT_USER_TOKEN)
    .header("content-type", "application/json")
    .body(body.to_string())
    .send()
    .await
    .unwrap()
}

/// The JSON answer to `request`.
async fn json_of(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn no_secret_reaches_the_report_the_recording_or_the_logs() {
    let sim = Simulator::start().await.unwrap();
    let mut proxy = Logged::start(&sim.url(), "secrets");
    let url = proxy.url.clone();
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
    let body = json!({"password": PASSWORD, "extra": {"password": 5}});
    let reset = reset_password(&http, &url, "n2", body).await;
    assert_eq!(reset.status(), 299);
    let typed = reset_password(&http, &url, "n3", json!({"password": 123456789})).await;
    assert_eq!(typed.headers()["x-licensing-deviations"], "1");
    // Recording through the admin API: restarted with a filter, read, stopped.
    let admin = format!("{url}/__sandbox/v1/recording");
    let status = json_of(http.get(&admin)).await;
    assert_eq!(
        (status["recording"].clone(), status["entries"].clone()),
        (json!(true), json!(3))
    );
    let first = json_of(http.get(format!("{admin}/har"))).await;
    let first_text = first.to_string();
    assert_eq!(first["log"]["entries"][0]["_operationId"], "batchOrder");
    assert!(
        first["log"]["entries"][0]["_deviations"]
            .as_array()
            .unwrap()
            .len()
            >= 2
    );
    let filter = json!({"operations": ["listAssetNums"], "outcomes": ["businessError"]});
    let started = json_of(http.post(&admin).json(&filter)).await;
    assert_eq!(started["entries"], json!(0));
    for eg in ["EG-404", "EG-405"] {
        super::support::call(&http, &url, "listAssetNums", &[eg], &[], None).await;
    }
    super::support::call(&http, &url, "listLentLocks", &["EG-404"], &[], None).await;
    let har = json_of(http.delete(&admin)).await;
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
    let logs = proxy.stop();
    let recorded = std::fs::read_to_string(&proxy.record).unwrap_or_default();
    let lines = std::fs::read_to_string(&proxy.report).unwrap();
    let found = read_report(&proxy.report);
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
