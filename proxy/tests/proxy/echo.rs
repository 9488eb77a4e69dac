//! An upstream that echoes every request whole in its `message` and `cause` (and a
//! credential in a reply header, and a password as its `code`): no credential the client
//! sent appears in anything the proxy keeps or serves: the report, the recording (file and
//! admin API), the console, the logs. The files are readable by their owner only.

use serde_json::json;

use super::{
    raw::{self, Reply},
    support::Logged,
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
    let mut proxy = Logged::start(&stub.url, "echo");
    let url = proxy.url.clone();
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
    let text = |url: String| {
        let http = http.clone();
        async move { http.get(url).send().await.unwrap().text().await.unwrap() }
    };
    let served = [
        ("recording API", text(format!("{admin}/har")).await),
        ("recording status", text(admin.clone()).await),
        (
            "console",
            text(format!("{url}/__sandbox/conformance")).await,
        ),
    ];
    let logs = proxy.stop();
    let files = [
        ("report", std::fs::read_to_string(&proxy.report).unwrap()),
        (
            "recording file",
            std::fs::read_to_string(&proxy.record).unwrap(),
        ),
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
    for file in [&proxy.report, &proxy.record] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
}
