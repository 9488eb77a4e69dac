//! Tokens never show: not in `Debug` of clients and builders, not in error text, not in
//! logs (the SDK's own spans and events, nor reqwest's and hyper's internals at TRACE).

use std::{
    io::Write,
    sync::{Arc, Mutex, OnceLock},
};

use crate::common::*;
use licensing_sdk::{
    Error, RetryPolicy, StaticToken,
    auth::{CredentialsError, TokenFuture},
    member, order,
};
use serde_json::json;
use wiremock::{Mock, MockServer, ResponseTemplate, matchers::any};

/// Distinct from the tokens of every other test, so a leak cannot hide behind them.
const APP: &str = "app-SECRET-4f8a91";
const CLIENT: &str = "client-SECRET-77c2e0";
const USER: &str = "user-SECRET-d3b5aa";

fn assert_no_tokens(what: &str, text: &str) {
    for token in [APP, CLIENT, USER, APP_TOKEN, CLIENT_TOKEN, USER_TOKEN] {
        assert!(!text.contains(token), "{what} leaks {token}: {text}");
    }
    assert!(
        !text.contains("SECRET"),
        "{what} leaks a token fragment: {text}"
    );
}

fn order_builder(uri: &str) -> licensing_sdk::ClientBuilder<licensing_sdk::OrderService> {
    order::Client::builder(uri).application_token(APP)
}

fn member_builder(uri: &str) -> licensing_sdk::ClientBuilder<licensing_sdk::MemberService> {
    member::Client::builder(uri)
        .client_token(CLIENT)
        .user_token(USER)
}

#[test]
fn debug_of_clients_builders_and_tokens() {
    let uri = "http://127.0.0.1:9";
    let builder = order_builder(uri);
    assert_no_tokens("order ClientBuilder", &format!("{builder:?}"));
    assert!(
        format!("{builder:?}").contains("127.0.0.1:9"),
        "useful Debug"
    );
    let client = builder.build().expect("client");
    assert_no_tokens("order::Client", &format!("{client:?}"));
    assert_no_tokens("order::Client {:#?}", &format!("{client:#?}"));
    assert_no_tokens(
        "an operation builder",
        &format!("{:?}", client.query_enterprise().channel_code("CH01")),
    );

    let builder = member_builder(uri);
    assert_no_tokens("member ClientBuilder", &format!("{builder:?}"));
    let client = builder.build().expect("client");
    assert_no_tokens("member::Client", &format!("{client:?}"));
    assert_no_tokens(
        "an operation builder",
        &format!("{:?}", client.delete_member().member_global_id("MG-2")),
    );

    assert_no_tokens("StaticToken", &format!("{:?}", StaticToken::new(APP)));
}

#[tokio::test]
async fn transport_errors_do_not_show_tokens() {
    let url = refused_url();
    let order = order_builder(&url)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let member = member_builder(&url)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();

    for error in [
        call_operation(&order, &member, "queryEnterprise").await,
        call_operation(&order, &member, "listLentLocks").await,
    ] {
        let error = error.expect_err("nothing listens");
        assert!(matches!(error, Error::Transport { .. }), "{error:?}");
        assert_no_tokens("Transport Display", &error.to_string());
        assert_no_tokens("Transport Debug", &format!("{error:?}"));
        let mut source = std::error::Error::source(&error);
        while let Some(s) = source {
            assert_no_tokens("Transport source", &format!("{s} {s:?}"));
            source = s.source();
        }
    }
}

/// A token that cannot be a header value is refused before sending, without echoing it.
#[tokio::test]
async fn credentials_errors_do_not_show_tokens() {
    let server = unreachable().await;
    let bad_app = "app-SECRET-4f8a91\r\nX-Injected: 1";
    let order = order::Client::builder(&server.uri())
        .application_token(bad_app)
        .retry(fast_retry(3))
        .build()
        .unwrap();
    let member = member::Client::builder(&server.uri())
        .client_token(CLIENT)
        .user_token("user-SECRET-d3b5aa\n")
        .retry(fast_retry(3))
        .build()
        .unwrap();

    for id in ["bindEnterprise", "lendAssets"] {
        let error = call_operation(&order, &member, id)
            .await
            .expect_err("an invalid token");
        assert!(matches!(error, Error::Credentials(_)), "{id}: {error:?}");
        assert_no_tokens("Credentials Display", &error.to_string());
        assert_no_tokens("Credentials Debug", &format!("{error:?}"));
    }
    server.verify().await;
}

/// A provider's failure is reported as the provider put it, and not retried.
#[tokio::test]
async fn a_failing_provider_is_a_credentials_error() {
    let server = unreachable().await;
    let failing = || -> TokenFuture<'static> {
        Box::pin(async { Err(CredentialsError("token endpoint unavailable".into())) })
    };
    let order = order::Client::builder(&server.uri())
        .application_token_provider(failing)
        .retry(fast_retry(3))
        .build()
        .unwrap();

    let error = call_operation(&order, &member_client(&server.uri()), "queryEnterprise")
        .await
        .expect_err("no token");
    match &error {
        Error::Credentials(message) => assert!(message.contains("token endpoint unavailable")),
        other => panic!("expected Error::Credentials, got {other:?}"),
    }
    server.verify().await;
}

// ------------------------------------------------------------------------------ tracing

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Buffer {
    type Writer = Buffer;
    fn make_writer(&'a self) -> Buffer {
        self.clone()
    }
}

/// Everything logged in this test binary at TRACE, including the `log` records of
/// reqwest (bridged) and hyper's `tracing` events. The mock server's own logging is off:
/// it sees the tokens by design.
fn log_output() -> Buffer {
    static BUFFER: OnceLock<Buffer> = OnceLock::new();
    BUFFER
        .get_or_init(|| {
            let buffer = Buffer::default();
            tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new("trace,wiremock=off"))
                .with_writer(buffer.clone())
                .with_ansi(false)
                .try_init()
                .expect("the only subscriber of this test binary");
            buffer
        })
        .clone()
}

#[tokio::test]
async fn tracing_output_has_operations_but_no_tokens() {
    let logs = log_output();
    let server = MockServer::start().await;
    reply_documented(&server, "queryEnterprise").await;
    // A retried call logs its error between attempts.
    Mock::given(any())
        .respond_with(ResponseTemplate::new(299).set_body_json(json!({
            "code": "500", "message": "network exception, retry", "cause": "upstream"
        })))
        .mount(&server)
        .await;
    let order = order_builder(&server.uri())
        .retry(fast_retry(2))
        .build()
        .unwrap();
    let member = member_builder(&server.uri())
        .retry(fast_retry(2))
        .build()
        .unwrap();

    call_operation(&order, &member, "queryEnterprise")
        .await
        .expect("succeeds");
    call_operation(&order, &member, "lendAssets")
        .await
        .expect_err("code 500 twice");
    let refused = refused_url();
    let order_refused = order_builder(&refused)
        .retry(fast_retry(2))
        .build()
        .unwrap();
    call_operation(&order_refused, &member, "batchOrder")
        .await
        .expect_err("nothing listens");

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).expect("UTF-8 logs");
    for expected in [
        "queryEnterprise",
        "lendAssets",
        "batchOrder",
        "retry=\"retry\"",
    ] {
        assert!(text.contains(expected), "logs lack {expected:?}:\n{text}");
    }
    // The HTTP stack's internals were captured too, so their silence about tokens counts.
    assert!(
        text.contains("reqwest") || text.contains("hyper"),
        "no HTTP internals in the logs:\n{text}"
    );
    if std::env::var_os("SHOW_LOGS").is_some() {
        eprintln!("{text}");
    }
    assert_no_tokens("tracing output", &text);
}
