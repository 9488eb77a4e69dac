//! An upstream that echoes every request whole in its `message` and `cause` (and a
//! credential in a reply header, and a password as its `code`): no credential the client
//! sent appears in anything the proxy keeps or serves: the report, the recording (file and
//! admin API), the console, the logs. The files are readable by their owner only.

use std::{
    io::Read,
    process::{Command, Stdio},
};

use licensing_test_support::process::listening_url;
use serde_json::json;

use super::{
    raw::{self, Reply},
    support::temp_dir,
};

const APP_TOKEN: &str = "app-token-echo-71";
const CLIENT_TOKEN: &str = "client-token-echo-72";
const USER_TOKEN: &str = "user-token-echo-73";
const APP_KEY: &str = "app-key-echo-74";
const COOKIE: &str = "cookie-echo-75";
const PASSWORD: &str = "Pass-echo-76";
const NESTED: &str = "Nested-echo-77";
const NUMERIC: &str = "987654321";

#[tokio::test]
async fn credentials_echoed_by_the_upstream_are_kept_nowhere() {
    let stub = raw::start(|request| {
        let text = format!("{}{}", request.head, String::from_utf8_lossy(&request.body));
        let auth = request
            .head
            .lines()
            .find_map(|l| l.strip_prefix("authorization: "))
            .unwrap_or("none")
            .to_string();
        // A password sent as the reply's `code`: a deviation quoting it.
        let code = if text.contains(PASSWORD) {
            PASSWORD
        } else {
            "99999"
        };
        let body = json!({"code": code, "message": text, "cause": format!("echo: {text}")});
        Reply {
            status: 299,
            headers: vec![("x-echo".into(), format!("you sent {auth}"))],
            body: body.to_string().into_bytes(),
            chunked: false,
        }
    })
    .await;
    let dir = temp_dir("echo");
    let report = dir.path().join("report.jsonl");
    let record = dir.path().join("recording.har");
    let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
        .args(["--addr", "127.0.0.1:0", "--upstream", &stub.url])
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
    let reset = http
        .put(format!(
            "{url}/me/api/v1/enterprise/EG-1/member/MG-1/resetPassword"
        ))
        .query(&[("g_nonce", "n1"), ("appKey", APP_KEY)])
        .bearer_auth(CLIENT_TOKEN)
        .header("clientToken", CLIENT_TOKEN)
        .header("userToken", USER_TOKEN)
        .header("cookie", format!("sid={COOKIE}; theme=dark"))
        .header("content-type", "application/json")
        .body(json!({"password": PASSWORD}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), 299);
    let echoed = reset.text().await.unwrap();
    assert!(
        echoed.contains(PASSWORD),
        "the stub echoes to the client: {echoed}"
    );
    let batch = http
        .post(format!("{url}/order/api/order/v1/licenseOrder/batchOrder"))
        .query(&[("g_nonce", "n2")])
        .bearer_auth(APP_TOKEN)
        .header("content-type", "application/json")
        .body(
            json!({"channelCode": "CH01", "orderList": [{"admin": {"password": NESTED}, "pin": {"token": 987654321u64}}]})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(batch.status(), 299);

    let admin = format!("{url}/__sandbox/v1/recording");
    let served = [
        (
            "recording API",
            http.get(format!("{admin}/har"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        ),
        (
            "recording status",
            http.get(&admin).send().await.unwrap().text().await.unwrap(),
        ),
        (
            "console",
            http.get(format!("{url}/__sandbox/conformance"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        ),
    ];
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
    let files = [
        ("report", std::fs::read_to_string(&report).unwrap()),
        ("recording file", std::fs::read_to_string(&record).unwrap()),
        ("logs", logs),
    ];
    let (_, har) = &served[0];
    assert!(
        har.contains("resetPassword") && har.contains("echo: PUT"),
        "the echo is recorded: {har}"
    );
    assert!(har.contains("you sent [REDACTED]"), "a reply header: {har}");
    let (_, page) = &served[2];
    assert!(page.contains("undocumented-code"), "{page}");
    for (what, text) in served.iter().chain(&files) {
        for secret in [
            APP_TOKEN,
            CLIENT_TOKEN,
            USER_TOKEN,
            APP_KEY,
            COOKIE,
            PASSWORD,
            NESTED,
            NUMERIC,
        ] {
            assert!(!text.contains(secret), "{secret} in the {what}:\n{text}");
        }
    }
    #[cfg(unix)]
    for file in [&report, &record] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
}
