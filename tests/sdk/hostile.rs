//! The SDK against a broken or hostile server, over real sockets on loopback: no
//! credential in any error, server text that cannot flood or forge log lines, the
//! business code kept when the rest of a reply is undecodable, `Retry-After` and 429
//! honoured, and reply headers past the HTTP client's limits not retried.

use std::{
    error::Error as _,
    io::{Read as _, Write as _},
    net::TcpStream,
    sync::atomic::Ordering,
    time::{Duration, Instant},
};

use licensing_sdk::{
    Error, ErrorCode, OTHER_CODE, RetryPolicy, SHOWN_TEXT_BYTES, TransportKind, member, operations,
    order,
};
use licensing_test_support::raw::RawServer;
use serde_json::json;
use wiremock::{MockServer, ResponseTemplate};

use crate::{common::*, pki::Pki};

// ------------------------------------------------------------------------------ servers

/// Holds the connection open without a word until the client gives up.
fn hold(mut stream: TcpStream) {
    let mut buf = [0u8; 1024];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}

// ------------------------------------------------------------------------------ credentials

/// Distinct from every other test's values, so a leak cannot hide behind them.
const APP_KEY: &str = "appkey-SECRET-91c3";
/// The request bodies' passwords (the specs' examples `call_operation` sends).
const PASSWORDS: [&str; 3] = ["Initial-Pass-1", "Initial-Pass-2", "New-Pass-2026"];

fn assert_no_credentials(what: &str, text: &str) {
    for secret in [APP_KEY, APP_TOKEN, CLIENT_TOKEN, USER_TOKEN]
        .into_iter()
        .chain(PASSWORDS)
    {
        assert!(!text.contains(secret), "{what} leaks {secret}: {text}");
    }
    for query in ["appKey", "g_nonce", "SECRET"] {
        assert!(!text.contains(query), "{what} shows {query}: {text}");
    }
}

/// Every rendering of an error and of each error in its source chain.
fn renderings(error: &Error) -> Vec<(String, String)> {
    let mut all = vec![
        ("Display".to_string(), error.to_string()),
        ("Debug".to_string(), format!("{error:?}")),
        ("{:#?}".to_string(), format!("{error:#?}")),
    ];
    let mut source = error.source();
    let mut depth = 0;
    while let Some(s) = source {
        depth += 1;
        all.push((format!("source {depth} Display"), s.to_string()));
        all.push((format!("source {depth} Debug"), format!("{s:?}")));
        all.push((format!("source {depth} {{:#?}}"), format!("{s:#?}")));
        source = s.source();
    }
    all
}

/// One attempt of every operation against `url`; `batchOrder` with [`APP_KEY`].
async fn every_operation(url: &str, timeout: Duration) -> Vec<(&'static str, Error)> {
    let o = order::Client::builder(url)
        .application_token(APP_TOKEN)
        .timeout(timeout)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let m = member::Client::builder(url)
        .client_token(CLIENT_TOKEN)
        .user_token(USER_TOKEN)
        .timeout(timeout)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let calls = operations::ALL.iter().map(|op| {
        let (o, m) = (&o, &m);
        async move {
            let result = if op.id == "batchOrder" {
                o.batch_order()
                    .app_key(APP_KEY)
                    .body(body_example::<order::types::BatchOrderRequest>())
                    .await
                    .map(drop)
            } else {
                call_operation(o, m, op.id).await
            };
            (op.id, result.expect_err("a failing server"))
        }
    });
    futures_util::future::join_all(calls).await
}

/// Timeout, reset, short body, a body that stalls, TLS failure, refused connection: for
/// each, every operation (`batchOrder` carries the appKey in its query, the others tokens
/// in headers and passwords in bodies). No rendering of the error or of its sources shows
/// a credential or the query; each names the operation and, where there is one, the URL's
/// path on the real origin.
#[tokio::test]
async fn no_credential_in_any_transport_error() {
    let timeout_url = RawServer::start(|stream, _| hold(stream)).url;
    let reset_url = RawServer::start(|stream, _| drop(stream)).url;
    let short_url = RawServer::start(|mut stream, _| {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"code\":0,");
    })
    .url;
    // Chunked, so the reply takes the SDK's counted-body path; then nothing more.
    let stall_url = RawServer::start(|mut stream, _| {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{\"cod\r\n");
        hold(stream);
    })
    .url;
    let pki = Pki::new();
    let tls = licensing_sim::Simulator::builder()
        .tls(licensing_sim::TlsConfig::from_pem(pki.cert.as_bytes(), pki.key.as_bytes()).unwrap())
        .start()
        .await
        .unwrap();
    let tls_url = format!("https://localhost:{}", tls.addr().port());
    let refused = refused_url();

    let quick = Duration::from_millis(400);
    let cases = [
        ("timeout", timeout_url.as_str(), quick),
        ("reset", &reset_url, quick),
        ("short body", &short_url, quick),
        ("stalled chunked body", &stall_url, quick),
        ("TLS failure", &tls_url, Duration::from_secs(5)),
        ("refused", &refused, quick),
    ];
    for (failure, url, timeout) in cases {
        let origin = url
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        for (id, error) in every_operation(url, timeout).await {
            let what = format!("{failure}, {id}");
            match (&error, failure) {
                (Error::Tls { operation, .. }, "TLS failure") => assert_eq!(*operation, id),
                (Error::Transport { operation, .. }, _) => assert_eq!(*operation, id, "{what}"),
                (other, _) => panic!("{what}: {other:?}"),
            }
            let shown = renderings(&error);
            for (how, text) in &shown {
                assert_no_credentials(&format!("{what}, {how}"), text);
                assert!(
                    !text.contains("no.url.provided.local"),
                    "{what}, {how}: {text}"
                );
            }
            let display = &shown[0].1;
            assert!(display.starts_with(id), "{what}: {display}");
            // The URL shown is the request's, without its query.
            let url_shown = format!("{origin}{}", path_of(id));
            assert!(
                shown.iter().any(|(_, text)| text.contains(&url_shown)),
                "{what}: no {url_shown} in {shown:#?}"
            );
        }
    }
    tls.shutdown().await.unwrap();
}

/// The path `call_operation` sends for `id`, its parameters filled in order.
fn path_of(id: &str) -> String {
    let op = op(id);
    let values: Vec<&str> = op
        .path
        .split('{')
        .skip(1)
        .map(|rest| match rest.split('}').next().unwrap() {
            "enterpriseGlobalId" => "EG-7f3a",
            "memberGlobalId" => "MG-2",
            "assetId" => "A-1",
            other => panic!("{id}: no value for {{{other}}}"),
        })
        .collect();
    op.path_with(&values)
}

// ------------------------------------------------------------------------------ server text

/// A megabyte-long code and a message and cause with line breaks and ANSI escapes: the
/// error keeps them whole, shows them capped and escaped, and names its kind from a
/// fixed set.
#[tokio::test]
async fn server_text_is_bounded_and_inert_in_errors() {
    let server = MockServer::start().await;
    let code = "9".repeat(1_000_000);
    let message = "denied\nINFO forged line\r\n\u{1b}[2J\u{1b}[31mred";
    let cause = format!("{}\u{2028}end", "c".repeat(5000));
    reply(
        &server,
        "allocateShellNums",
        &[],
        299,
        json!({"code": code, "message": message, "cause": cause}),
    )
    .await;
    let o = order_client(&server.uri());
    let error = call_operation(&o, &member_client(&server.uri()), "allocateShellNums")
        .await
        .unwrap_err();

    let Error::Api(api) = &error else {
        panic!("expected Error::Api, got {error:?}")
    };
    // Everything the server said is there, in full.
    assert_eq!(api.code, ErrorCode::Other(code.clone()));
    assert_eq!(api.message, message);
    assert_eq!(api.cause.as_deref(), Some(cause.as_str()));

    let shown = error.to_string();
    assert!(
        shown.len() < 4 * SHOWN_TEXT_BYTES,
        "Display is {} bytes",
        shown.len()
    );
    assert!(
        !shown.contains(['\n', '\r', '\u{1b}', '\u{2028}']),
        "raw control characters in {shown:?}"
    );
    assert!(
        shown.contains("denied\\nINFO forged line\\r\\n\\u{1b}[2J"),
        "{shown}"
    );
    assert!(shown.contains("more bytes)"), "{shown}");
    assert!(shown.starts_with("allocateShellNums: error 999"), "{shown}");

    // Telemetry's `error.type`: one name for every undocumented code.
    assert_eq!(error.kind_name(), OTHER_CODE);
    let documented = api_error(299, json!({"code": "13004", "message": "x"})).await;
    assert_eq!(documented.kind_name(), "13004");
}

async fn api_error(status: u16, body: serde_json::Value) -> Error {
    let server = MockServer::start().await;
    answer_any(
        &server,
        ResponseTemplate::new(status).set_body_json(body),
        None,
    )
    .await;
    call_operation(
        &order_client(&server.uri()),
        &member_client(&server.uri()),
        "allocateShellNums",
    )
    .await
    .unwrap_err()
}

// ------------------------------------------------------------------------------ business code

/// A reply with an error code whose `data` has the wrong type, or that has no `message`:
/// the business code is kept, with the decode failure as the error's source.
#[tokio::test]
async fn the_business_code_survives_an_undecodable_rest() {
    for (body, message) in [
        (
            json!({"code": "33006", "message": "insufficient nodes", "data": "not a list"}),
            "insufficient nodes",
        ),
        (json!({"code": "33006", "data": null}), ""),
        (
            json!({"code": 13004, "message": {"nested": true}, "cause": 7}),
            "",
        ),
    ] {
        let error = api_error(299, body.clone()).await;
        let Error::Api(api) = &error else {
            panic!("{body}: expected Error::Api, got {error:?}")
        };
        assert!(api.code.is_known(), "{body}: {}", api.code);
        assert_eq!(api.message, message, "{body}");
        assert_eq!(api.http_status, 299);
        let failure = api.decode_failure.as_ref().expect("the decode failure");
        assert!(!failure.reason.is_empty());
        let source = error.source().expect("a source");
        assert!(source.to_string().contains("undecodable"), "{source}");
        assert!(error.to_string().contains("undecodable"), "{error}");
    }
    // A code 500 kept this way is still retried as the documents ask.
    let server = MockServer::start().await;
    answer_any(
        &server,
        ResponseTemplate::new(299).set_body_json(json!({"code": "500", "data": 1})),
        Some(1),
    )
    .await;
    reply_documented(&server, "allocateShellNums").await;
    let o = order_client_with(&server.uri(), fast_retry(3));
    call_operation(&o, &member_client(&server.uri()), "allocateShellNums")
        .await
        .expect("the second attempt succeeds");
    // Success with undecodable data is no business error: still `Decode`.
    let error = api_error(200, json!({"code": 0, "message": "success", "data": "x"})).await;
    assert!(matches!(error, Error::Decode { .. }), "{error:?}");
}

// ------------------------------------------------------------------------------ Retry-After

fn rate_limited(seconds: &str) -> ResponseTemplate {
    ResponseTemplate::new(429)
        .insert_header("retry-after", seconds)
        .set_body_string("slow down")
}

/// How long `id`, allowed three attempts, took to succeed at its second.
async fn second_attempt_after(server: &MockServer, id: &str) -> Duration {
    let o = order_client_with(&server.uri(), fast_retry(3));
    let started = Instant::now();
    call_operation(&o, &member_client(&server.uri()), id)
        .await
        .expect("the second attempt succeeds");
    started.elapsed()
}

/// A 429 refused the request: every operation repeats it, after the server's wait.
#[tokio::test]
async fn a_429_is_retried_after_the_servers_wait_on_every_operation() {
    assert!(!op("allocateShellNums").idempotent);
    let server = MockServer::start().await;
    answer_any(&server, rate_limited("1"), Some(1)).await;
    reply_documented(&server, "allocateShellNums").await;
    // The backoff alone would wait at most 10 ms.
    let waited = second_attempt_after(&server, "allocateShellNums").await;
    assert!(waited >= Duration::from_millis(950), "waited {waited:?}");
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    assert_eq!(received(&server).await.len(), 2);

    // Without the header, the backoff.
    let server = MockServer::start().await;
    answer_any(&server, ResponseTemplate::new(429), Some(2)).await;
    reply_ok(&server, "lendAssets", &["MG-2"]).await;
    let m = member_client_with(&server.uri(), fast_retry(3));
    let started = Instant::now();
    call_operation(&order_client(&server.uri()), &m, "lendAssets")
        .await
        .expect("the third attempt succeeds");
    // Two backoffs of at most 10 ms, not a second each (a margin for a busy machine).
    assert!(started.elapsed() < Duration::from_millis(1500));
    assert_eq!(received(&server).await.len(), 3);
}

/// An HTTP date works as well as seconds.
#[tokio::test]
async fn retry_after_as_an_http_date() {
    let server = MockServer::start().await;
    let at = chrono::DateTime::<chrono::Utc>::from(
        std::time::SystemTime::now() + Duration::from_secs(2),
    );
    let date = at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    answer_any(&server, rate_limited(&date), Some(1)).await;
    reply_documented(&server, "queryEnterprise").await;
    let started = Instant::now();
    second_attempt_after(&server, "queryEnterprise").await;
    // The second attempt is not made before the date (whole seconds on the wire), however
    // long the set-up took on a busy machine: the clock it is read against is the wall's.
    // (100 ms for timers that round to the millisecond.)
    let date_on_the_wire = at.timestamp() * 1000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        now + 100 >= date_on_the_wire,
        "retried at {now} ms, before {date_on_the_wire} ms"
    );
    // And not at the 60 s cap either.
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(20), "waited {waited:?}");
}

/// A 503 with `Retry-After` waits as told on the operations a 503 may repeat (the
/// idempotent ones), and still does not repeat the others.
#[tokio::test]
async fn a_503_with_retry_after_waits_as_told_on_idempotent_operations() {
    let server = MockServer::start().await;
    answer_any(
        &server,
        ResponseTemplate::new(503).insert_header("retry-after", "1"),
        Some(1),
    )
    .await;
    reply_documented(&server, "queryEnterprise").await;
    let o = order_client_with(&server.uri(), fast_retry(3));
    let m = member_client(&server.uri());
    let started = Instant::now();
    call_operation(&o, &m, "queryEnterprise")
        .await
        .expect("the second attempt succeeds");
    assert!(started.elapsed() >= Duration::from_millis(950));

    let server = MockServer::start().await;
    answer_any(
        &server,
        ResponseTemplate::new(503).insert_header("retry-after", "1"),
        None,
    )
    .await;
    let o = order_client_with(&server.uri(), fast_retry(3));
    let result = call_operation(&o, &m, "allocateShellNums").await;
    assert!(
        matches!(result, Err(Error::UnexpectedStatus { status: 503, .. })),
        "{result:?}"
    );
    assert_eq!(received(&server).await.len(), 1, "not idempotent");
}

/// The call's deadline bounds the server's wait: a wait that ends within it is made, one
/// that would end past it is not started, and the 429 comes back at once.
#[tokio::test]
async fn a_retry_after_is_bounded_by_the_deadline() {
    let within = |server: &MockServer| {
        order_builder(&server.uri())
            .retry(fast_retry(3))
            .deadline(Duration::from_secs(3))
            .build()
            .unwrap()
    };
    let server = MockServer::start().await;
    answer_any(&server, rate_limited("1"), Some(1)).await;
    reply_documented(&server, "queryEnterprise").await;
    let started = Instant::now();
    call_operation(
        &within(&server),
        &member_client(&server.uri()),
        "queryEnterprise",
    )
    .await
    .expect("one second fits in the deadline");
    assert!(started.elapsed() >= Duration::from_millis(950));

    let server = MockServer::start().await;
    answer_any(&server, rate_limited("30"), None).await;
    let started = Instant::now();
    let result = call_operation(
        &within(&server),
        &member_client(&server.uri()),
        "queryEnterprise",
    )
    .await;
    assert!(
        matches!(result, Err(Error::UnexpectedStatus { status: 429, .. })),
        "{result:?}"
    );
    // At once, not after the 30 s asked for (a margin for a busy machine).
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(received(&server).await.len(), 1);
}

// ------------------------------------------------------------------------------ headers

/// Reply headers past hyper's limits: the same reply would come again, so even an
/// idempotent operation is not repeated.
#[tokio::test]
async fn reply_headers_over_the_limit_are_not_retried() {
    let RawServer { url, requests } = RawServer::start(|mut stream, _| {
        let mut head = String::from("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n");
        for i in 0..4000 {
            head.push_str(&format!("x-filler-{i}: {}\r\n", "v".repeat(64)));
        }
        head.push_str("content-length: 2\r\n\r\n{}");
        let _ = stream.write_all(head.as_bytes());
    });
    assert!(op("queryEnterprise").idempotent);
    let o = order_client_with(&url, fast_retry(4));
    let error = call_operation(&o, &member_client(&url), "queryEnterprise")
        .await
        .unwrap_err();
    match &error {
        Error::Transport { kind, .. } => {
            assert_eq!(*kind, TransportKind::HeadersTooLarge, "{error:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(error.kind_name(), "headers_too_large");
    assert_eq!(requests.load(Ordering::SeqCst), 1, "not retried");
}
