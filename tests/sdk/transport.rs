//! The transport as a partner meets it: configuration from the environment, deadlines and
//! per-call options, bounded replies, redirects, typed transport errors and telemetry.
//! Hostile servers are real sockets on loopback.

use std::{
    collections::HashMap,
    io::Write as _,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use licensing_sdk::{CallOptions, ConfigError, Error, RetryPolicy, TransportKind, member, order};
use licensing_sim::{DEFAULT_APP_TOKEN, FaultSettings, Simulator};
use licensing_test_support::raw::RawServer;
use serde_json::json;
use wiremock::{Mock, MockServer, ResponseTemplate, matchers::any};

use crate::common::*;

// ------------------------------------------------------------------------------ from_env

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

fn config_error(result: Result<impl std::fmt::Debug, Error>) -> ConfigError {
    match result {
        Err(Error::Config(e)) => e,
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

const ORDER_VARS: &[(&str, &str)] = &[
    ("LICENSING_ORDER_URL", "https://licensing.example.com"),
    ("LICENSING_APP_TOKEN", "env-app-token-X1"),
];
const MEMBER_VARS: &[(&str, &str)] = &[
    ("LICENSING_MEMBER_URL", "https://licensing.example.com"),
    ("LICENSING_CLIENT_TOKEN", "env-client-token-X2"),
    ("LICENSING_USER_TOKEN", "env-user-token-X3"),
];

#[test]
fn from_env_names_each_missing_required_variable() {
    for service in ["order", "member"] {
        let all = if service == "order" {
            ORDER_VARS
        } else {
            MEMBER_VARS
        };
        for (missing, _) in all {
            for value in [None, Some(""), Some("   ")] {
                let mut pairs: Vec<_> = all.iter().filter(|(k, _)| k != missing).copied().collect();
                if let Some(v) = value {
                    pairs.push((missing, v));
                }
                let e = if service == "order" {
                    config_error(order::Client::builder_from_vars(vars(&pairs)).map(|_| ()))
                } else {
                    config_error(member::Client::builder_from_vars(vars(&pairs)).map(|_| ()))
                };
                assert_eq!(e, ConfigError::new(*missing, "is not set"), "{service}");
            }
        }
        let built = if service == "order" {
            order::Client::builder_from_vars(vars(all))
                .and_then(|b| b.build())
                .map(|_| ())
        } else {
            member::Client::builder_from_vars(vars(all))
                .and_then(|b| b.build())
                .map(|_| ())
        };
        built.unwrap_or_else(|e| panic!("{service}: {e}"));
    }
}

#[test]
fn from_env_rejects_each_malformed_value_by_name() {
    let cases = [
        (
            "LICENSING_ORDER_URL",
            "licensing.example.com",
            "not an absolute http(s) URL",
        ),
        (
            "LICENSING_ORDER_URL",
            "ftp://x.example",
            "not an absolute http(s) URL",
        ),
        ("LICENSING_TIMEOUT", "soon", "expected a duration"),
        ("LICENSING_TIMEOUT", "-3s", "expected a duration"),
        (
            "LICENSING_CONNECT_TIMEOUT",
            "10 parsecs",
            "expected a duration",
        ),
        ("LICENSING_DEADLINE", "0", "expected a duration"),
        ("LICENSING_RETRY", "sometimes", "`standard` or `never`"),
        ("LICENSING_MAX_ATTEMPTS", "many", "a whole number"),
        ("LICENSING_MAX_ATTEMPTS", "0", "at least 1"),
        ("LICENSING_MAX_REPLY_BYTES", "1MB", "a whole number"),
        (
            "LICENSING_CA_FILE",
            "/nonexistent/ca.pem",
            "/nonexistent/ca.pem",
        ),
        ("LICENSING_PROXY", "::not a url::", "not a proxy URL"),
    ];
    for (name, value, problem) in cases {
        let mut pairs = ORDER_VARS.to_vec();
        pairs.retain(|(k, _)| *k != name);
        pairs.push((name, value));
        let e =
            config_error(order::Client::builder_from_vars(vars(&pairs)).and_then(|b| b.build()));
        let setting = if name == "LICENSING_ORDER_URL" {
            "base_url"
        } else if name == "LICENSING_PROXY" {
            "proxy"
        } else {
            name
        };
        assert_eq!(e.setting, setting, "{name}={value}: {e}");
        assert!(e.problem.contains(problem), "{name}={value}: {e}");
    }
}

#[test]
fn from_env_reads_every_setting() {
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), "not a certificate").unwrap();
    let mut pairs = ORDER_VARS.to_vec();
    let ca_path = ca.path().display().to_string();
    pairs.push(("LICENSING_CA_FILE", &ca_path));
    let e = config_error(order::Client::builder_from_vars(vars(&pairs)).map(|_| ()));
    assert_eq!(e.setting, "LICENSING_CA_FILE");
    assert!(e.problem.contains("no PEM certificate"), "{e}");
    drop(ca);

    let mut pairs = ORDER_VARS.to_vec();
    pairs.extend([
        ("LICENSING_TIMEOUT", "1.5"),
        ("LICENSING_CONNECT_TIMEOUT", "250ms"),
        ("LICENSING_DEADLINE", "2m"),
        ("LICENSING_RETRY", "standard"),
        ("LICENSING_MAX_ATTEMPTS", "7"),
        ("LICENSING_MAX_REPLY_BYTES", "1_000_000"),
        ("LICENSING_PROXY", "none"),
    ]);
    let builder = order::Client::builder_from_vars(vars(&pairs)).unwrap();
    let debug = format!("{builder:?}");
    for expected in [
        "timeout: 1.5s",
        "connect_timeout: 250ms",
        "deadline: Some(120s)",
        "max_attempts: 7",
        "max_reply_bytes: 1000000",
        "proxy: None",
        "https://licensing.example.com",
    ] {
        assert!(debug.contains(expected), "{expected} in {debug}");
    }
    assert!(!debug.contains("env-app-token-X1"), "{debug}");

    let mut pairs = MEMBER_VARS.to_vec();
    pairs.push(("LICENSING_RETRY", "never"));
    let builder = member::Client::builder_from_vars(vars(&pairs)).unwrap();
    let debug = format!("{builder:?}");
    assert!(debug.contains("retry: Never"), "{debug}");
    assert!(!debug.contains("env-client-token-X2") && !debug.contains("env-user-token-X3"));
}

#[tokio::test]
async fn tokens_from_the_environment_are_sent_and_never_shown() {
    let server = MockServer::start().await;
    reply_documented(&server, "queryEnterprise").await;
    let uri = server.uri();
    let client = order::Client::builder_from_vars(vars(&[
        ("LICENSING_ORDER_URL", &uri),
        ("LICENSING_APP_TOKEN", "env-app-token-X1"),
    ]))
    .unwrap()
    .build()
    .unwrap();
    assert!(!format!("{client:?}").contains("env-app-token-X1"));
    query(&client).await.unwrap();
    let request = only_request(&server).await;
    assert_eq!(
        request.headers.get("authorization").unwrap(),
        "Bearer env-app-token-X1"
    );
}

// ------------------------------------------------------------------------------ deadlines

/// A simulator that answers every request after `latency`.
async fn slow_simulator(latency: Duration) -> Simulator {
    Simulator::builder()
        .faults(FaultSettings {
            latency,
            ..Default::default()
        })
        .start()
        .await
        .expect("simulator")
}

fn sim_order_client(url: &str) -> licensing_sdk::ClientBuilder<licensing_sdk::OrderService> {
    order::Client::builder(url).application_token(DEFAULT_APP_TOKEN)
}

// On paused time: the simulator's delay, the timeouts, the waits and the deadline all run
// on the runtime's clock, so the figures are exact however busy the machine is.
#[tokio::test(start_paused = true)]
async fn a_deadline_bounds_all_attempts_and_waits() {
    let sim = slow_simulator(Duration::from_millis(400)).await;
    // Each attempt times out after 150 ms and is retried (queryEnterprise is idempotent);
    // without the deadline the call would make 10 attempts (~1.5 s plus waits).
    let client = sim_order_client(&sim.url())
        .timeout(Duration::from_millis(150))
        .deadline(Duration::from_millis(500))
        .retry(RetryPolicy::Backoff(licensing_sdk::Backoff {
            max_attempts: 10,
            initial_delay: Duration::from_millis(20),
            max_delay: Duration::from_millis(40),
            max_elapsed: Duration::from_secs(30),
        }))
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let result = query(&client).await;
    let took = started.elapsed();
    assert!(took <= Duration::from_millis(500), "took {took:?}");
    match result {
        Err(Error::DeadlineExceeded {
            operation,
            deadline,
            attempts,
        }) => {
            assert_eq!(operation, "queryEnterprise");
            assert_eq!(deadline, Duration::from_millis(500));
            assert!(attempts >= 2, "retried before the deadline: {attempts}");
        }
        // The last wait would have crossed the deadline, so the last error is returned.
        Err(Error::Transport {
            kind: TransportKind::ReadTimeout(Some(t)),
            ..
        }) => assert_eq!(t, Duration::from_millis(150)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn per_call_options_apply_to_that_call_only() {
    let sim = slow_simulator(Duration::from_millis(300)).await;
    let client = sim_order_client(&sim.url()).build().unwrap();

    let started = tokio::time::Instant::now();
    let result = query(&client)
        .call_options(CallOptions::new().deadline(Duration::from_millis(100)))
        .await;
    assert!(
        matches!(result, Err(Error::DeadlineExceeded { attempts: 1, .. })),
        "{result:?}"
    );
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(100),
        "the deadline, exactly"
    );

    let result = query(&client)
        .call_options(
            CallOptions::new()
                .timeout(Duration::from_millis(100))
                .retry(RetryPolicy::Never),
        )
        .await;
    match result {
        Err(e @ Error::Transport { .. }) => {
            let text = e.to_string();
            assert!(text.contains("read timeout after 100 ms"), "{text}");
            assert!(text.contains("may have been sent"), "{text}");
        }
        other => panic!("{other:?}"),
    }

    // The client's own settings are untouched: the same call now waits and succeeds.
    query(&client).await.expect("no deadline, 30 s timeout");
}

// ------------------------------------------------------------------------------ hostile replies

/// The raw server of the test helpers, its `respond` given a counter of the bytes it
/// managed to write.
fn raw_server(
    respond: impl Fn(&mut std::net::TcpStream, &AtomicU64) + Send + Sync + 'static,
) -> (String, Arc<AtomicU64>, Arc<AtomicUsize>) {
    let written = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&written);
    let server = RawServer::start(move |mut stream, _| respond(&mut stream, &counter));
    (server.url, written, server.requests)
}

/// Writes `head`, then 64 KiB chunks until the client stops reading or `max` is sent.
fn flood(stream: &mut std::net::TcpStream, written: &AtomicU64, head: &str, max: u64) {
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let chunk = vec![b'x'; 64 * 1024];
    let chunked = head.contains("chunked");
    while written.load(Ordering::SeqCst) < max {
        let ok = if chunked {
            stream
                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .and_then(|()| stream.write_all(&chunk))
                .and_then(|()| stream.write_all(b"\r\n"))
        } else {
            stream.write_all(&chunk)
        };
        if ok.is_err() {
            return;
        }
        written.fetch_add(chunk.len() as u64, Ordering::SeqCst);
    }
}

const LIMIT: u64 = 1024 * 1024;
/// What the server may get out before the client stops reading: the limit plus the
/// socket buffers of both ends, far below the 500 MB it tries to send.
const READ_BOUND: u64 = 48 * 1024 * 1024;
const HUGE: u64 = 500 * 1024 * 1024;

/// The client stopped reading: the server got no more than [`READ_BOUND`] out.
async fn assert_read_bounded(written: &AtomicU64, what: &str) {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let sent = written.load(Ordering::SeqCst);
    assert!(sent < READ_BOUND, "{what}: the server got {sent} bytes out");
}

#[tokio::test]
async fn an_oversized_reply_ends_at_the_limit() {
    for (head, what) in [
        (
            format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {HUGE}\r\n\r\n"),
            "declared length",
        ),
        (
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".to_string(),
            "endless chunked body",
        ),
        (
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n".to_string(),
            "body until close",
        ),
    ] {
        let (url, written, _) = raw_server(move |s, w| flood(s, w, &head, HUGE));
        let client = order_builder(&url).max_reply_bytes(LIMIT).build().unwrap();
        let result = query(&client).await;
        match result {
            Err(Error::ReplyTooLarge { operation, limit }) => {
                assert_eq!((operation, limit), ("queryEnterprise", LIMIT), "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
        assert_read_bounded(&written, what).await;
    }
}

#[tokio::test]
async fn a_huge_error_page_is_quoted_not_read() {
    let head = format!(
        "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/html\r\ncontent-length: {HUGE}\r\n\r\n"
    );
    let (url, written, _) = raw_server(move |s, w| flood(s, w, &head, HUGE));
    let client = order_builder(&url)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    match query(&client).await {
        Err(Error::UnexpectedStatus {
            status, excerpt, ..
        }) => {
            assert_eq!(status, 500);
            assert_eq!(excerpt.len(), 200);
        }
        other => panic!("{other:?}"),
    }
    assert_read_bounded(&written, "HTTP 500").await;
}

#[tokio::test]
async fn redirects_are_not_followed_and_nothing_reaches_the_other_origin() {
    let (target, _, reached) = raw_server(|s, _| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    });
    for status in [301, 302, 303, 307, 308] {
        let location = format!("{target}/steal");
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(
                ResponseTemplate::new(status).insert_header("location", location.as_str()),
            )
            .mount(&server)
            .await;
        let o = order_client(&server.uri());
        let m = member_client(&server.uri());
        for id in ["batchOrder", "addMembers"] {
            match call_operation(&o, &m, id).await {
                Err(Error::Redirect {
                    operation,
                    status: s,
                    location: l,
                }) => {
                    assert_eq!((operation, s), (id, status));
                    assert_eq!(l.as_deref(), Some(location.as_str()));
                }
                other => panic!("{id} {status}: {other:?}"),
            }
        }
        assert_eq!(
            received(&server).await.len(),
            2,
            "one attempt each, no retry"
        );
    }
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "nothing reached the other port"
    );
}

#[tokio::test]
async fn a_custom_client_that_follows_redirects_gets_an_error_not_the_reply() {
    let (target, _, reached) = raw_server(|s, _| {
        let body = r#"{"code":0,"message":"success","data":[]}"#;
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
    });
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(307).insert_header("location", format!("{target}/x").as_str()),
        )
        .mount(&server)
        .await;
    let client = order_builder(&server.uri())
        .http_client(reqwest::Client::new())
        .build()
        .unwrap();
    let result = query(&client).await;
    assert!(
        matches!(&result, Err(Error::Redirect { location: Some(l), .. }) if l == &target),
        "{result:?}"
    );
    // The user's client did follow it; the SDK refused what came back.
    assert_eq!(reached.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_custom_client_keeps_the_sdk_user_agent() {
    let server = MockServer::start().await;
    reply_documented(&server, "queryEnterprise").await;
    let custom = reqwest::Client::builder()
        .user_agent("their-agent/1.0")
        .build()
        .unwrap();
    let client = order_builder(&server.uri())
        .http_client(custom)
        .build()
        .unwrap();
    query(&client).await.unwrap();
    let request = only_request(&server).await;
    let agent = request.headers.get("user-agent").unwrap().to_str().unwrap();
    assert!(agent.starts_with("licensing-sdk/"), "{agent}");
}

// ------------------------------------------------------------------------------ errors

#[tokio::test]
async fn transport_errors_say_what_happened() {
    /// The error of one `queryEnterprise` attempt against `url`.
    async fn failure(url: &str) -> Error {
        let client = order_builder(url)
            .retry(RetryPolicy::Never)
            .build()
            .unwrap();
        query(&client).await.unwrap_err()
    }
    fn kind(e: &Error) -> (&TransportKind, bool) {
        match e {
            Error::Transport {
                kind,
                may_have_been_sent,
                ..
            } => (kind, *may_have_been_sent),
            other => panic!("expected a transport error, got {other:?}"),
        }
    }

    let e = failure(&refused_url()).await;
    let text = e.to_string();
    assert!(text.contains("connection refused"), "{text}");
    assert!(text.contains("was not sent"), "{text}");
    assert_eq!(e.kind_name(), "connect_refused");

    let e = failure("http://no-such-host.invalid").await;
    assert_eq!(kind(&e), (&TransportKind::Dns, false), "{e:?}");
    assert!(e.to_string().contains("DNS"), "{e}");

    // Reset: the server reads the request and closes without answering.
    let (url, _, _) = raw_server(|_, _| {});
    let e = failure(&url).await;
    assert_eq!(kind(&e), (&TransportKind::Reset, true), "{e:?}");
}

#[tokio::test]
async fn a_string_zero_code_is_success() {
    let server = MockServer::start().await;
    let mut body = reply_example("queryEnterprise");
    body["code"] = json!("0");
    reply(&server, "queryEnterprise", &[], 200, body).await;
    let client = order_client(&server.uri());
    let customers = query(&client).await.expect("\"0\" is success");
    assert!(!customers.is_empty());
}

#[test]
fn builder_errors_name_the_setting() {
    let e = config_error(
        order::Client::builder("not a url")
            .application_token("t")
            .build(),
    );
    assert_eq!(e.setting, "base_url");
    let e = config_error(order::Client::builder("http://x.example").build());
    assert_eq!(e, ConfigError::new("application_token", "is required"));
    let e = config_error(
        order::Client::builder("http://x.example")
            .application_token("t")
            .add_ca_certificate_pem("garbage")
            .build(),
    );
    assert_eq!(e.setting, "add_ca_certificate_pem");
    let e = config_error(
        order::Client::builder("http://x.example")
            .application_token("t")
            .add_ca_certificate_file("/nonexistent/ca.pem")
            .build(),
    );
    assert!(e.problem.contains("/nonexistent/ca.pem"), "{e}");
    let e = config_error(
        order::Client::builder("http://x.example")
            .application_token("t")
            .proxy("::nope::")
            .build(),
    );
    assert_eq!(e.setting, "proxy");
}

// ------------------------------------------------------------------------------ telemetry

/// Every event's fields, as text.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<HashMap<String, String>>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Fields<'a>(&'a mut HashMap<String, String>);
        impl tracing::field::Visit for Fields<'_> {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0
                    .insert(field.name().to_string(), format!("{value:?}"));
            }
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                self.0.insert(field.name().to_string(), value.to_string());
            }
        }
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(fields);
    }
}

#[test]
fn every_attempt_is_one_event_with_the_semantic_convention_names() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let server = MockServer::start().await;
            Mock::given(any())
                .respond_with(ResponseTemplate::new(299).set_body_json(json!({
                    "code": "500", "message": "network exception, retry", "cause": "upstream"
                })))
                .up_to_n_times(1)
                .mount(&server)
                .await;
            reply_documented(&server, "queryEnterprise").await;
            let client = order_client_with(&server.uri(), fast_retry(3));
            query(&client).await.expect("second attempt succeeds");
        });
    });
    let attempts: Vec<_> = events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.get("message").map(String::as_str) == Some("attempt finished"))
        .cloned()
        .collect();
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    let template = op("queryEnterprise").path;
    for (i, event) in attempts.iter().enumerate() {
        assert_eq!(event["http.request.method"], "GET");
        assert_eq!(event["url.template"], template);
        assert_eq!(event["attempt"], (i + 1).to_string());
        assert_eq!(event["http.request.resend_count"], i.to_string());
    }
    let (first, second) = (&attempts[0], &attempts[1]);
    assert_eq!(first["http.response.status_code"], "299");
    assert_eq!(first["error.type"], "500");
    assert_eq!(first["code"], "500");
    assert_eq!(first["retry"], "retry");
    assert!(first["retry_delay_ms"].parse::<u64>().unwrap() <= 5);
    assert_eq!(second["http.response.status_code"], "200");
    assert!(!second.contains_key("error.type"));
    assert_eq!(second["retry"], "stop");
    let all = format!("{attempts:?}");
    for secret in [APP_TOKEN, CLIENT_TOKEN, USER_TOKEN, "g_nonce"] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
}

#[test]
fn the_call_span_carries_the_server_address() {
    use tracing_subscriber::layer::SubscriberExt as _;
    #[derive(Clone, Default)]
    struct Spans(Arc<Mutex<Vec<String>>>);
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            self.0.lock().unwrap().push(format!(
                "{} {:?}",
                attrs.metadata().name(),
                attrs.values()
            ));
        }
    }
    let spans = Spans::default();
    tracing::subscriber::with_default(tracing_subscriber::registry().with(spans.clone()), || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let client = order_builder(&refused_url())
                .retry(RetryPolicy::Never)
                .build()
                .unwrap();
            let _ = query(&client).await;
        });
    });
    let spans = spans.0.lock().unwrap().join("\n");
    let call = spans
        .lines()
        .find(|l| l.starts_with("licensing_call"))
        .expect(&spans);
    assert!(call.contains("server.address: \"127.0.0.1\""), "{call}");
    assert!(call.contains("server.port:"), "{call}");
    assert!(call.contains("url.template"), "{call}");
}
