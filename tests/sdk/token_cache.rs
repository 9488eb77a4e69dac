//! `CachedToken`: one fetch for many concurrent calls, refresh ahead of expiry, one
//! refresh and one repeat when the platform refuses a token (`60000`, `60005`), fetch
//! failures as `Error::Credentials`, and no token in `Debug` or error text.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use crate::common::*;
use futures_util::future::join_all;
use licensing_sdk::{
    CachedToken, Error, ErrorCode, RetryPolicy, TokenProvider,
    auth::{CredentialsError, SecretString},
    member,
};
use secrecy::ExposeSecret as _;
use serde_json::json;
use wiremock::{MockServer, ResponseTemplate, matchers::header};

const EG: &str = "EG-7f3a";
const HOUR: Duration = Duration::from_secs(3600);

/// A provider whose `fetch` hands out `tokens` in turn (the last one once they run out),
/// each valid for `lifetime`, and counts its calls.
fn sequence(tokens: &[&'static str], lifetime: Duration) -> (Arc<AtomicUsize>, CachedToken) {
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = fetches.clone();
    let tokens = tokens.to_vec();
    let provider = CachedToken::new(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let token = tokens[n.min(tokens.len() - 1)];
        async move {
            // Long enough for every concurrent caller to arrive while it is in flight.
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok((token, lifetime))
        }
    });
    (fetches, provider)
}

async fn token(provider: &CachedToken) -> String {
    let token = provider.token().await.expect("a token");
    token.expose_secret().to_string()
}

fn member_client(uri: &str, user: CachedToken, retry: RetryPolicy) -> member::Client {
    member_base(uri, retry)
        .user_token_provider(user)
        .build()
        .expect("member client")
}

/// The business error a refused token gets, as the member center sends it.
fn refused(code: &str) -> ResponseTemplate {
    ResponseTemplate::new(299).set_body_json(json!({
        "code": code,
        "message": "invalid login token",
        "cause": "the token is invalid or expired",
    }))
}

/// `listLentLocks` answers `60005` to the user token `stale`, and its documented reply to
/// [`USER_TOKEN`].
async fn lent_locks_server() -> MockServer {
    let server = MockServer::start().await;
    mock("listLentLocks", &[EG])
        .and(header("usertoken", "stale"))
        .respond_with(refused("60005"))
        .mount(&server)
        .await;
    mock("listLentLocks", &[EG])
        .and(header("usertoken", USER_TOKEN))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply_example("listLentLocks")))
        .mount(&server)
        .await;
    server
}

fn user_tokens_sent(requests: &[wiremock::Request]) -> Vec<String> {
    requests
        .iter()
        .map(|r| r.headers["usertoken"].to_str().unwrap().to_string())
        .collect()
}

// ------------------------------------------------------------------------------ the cache

#[tokio::test]
async fn fifty_concurrent_calls_fetch_once() {
    let server = lent_locks_server().await;
    let (fetches, user) = sequence(&[USER_TOKEN], HOUR);
    let client = member_client(&server.uri(), user, RetryPolicy::Never);

    let results = join_all(
        (0..50).map(|_| async { client.list_lent_locks().enterprise_global_id(EG).await }),
    )
    .await;

    for result in results {
        result.expect("listLentLocks succeeds");
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 1, "one fetch for 50 calls");
    let requests = received_n(&server, 50).await;
    assert!(user_tokens_sent(&requests).iter().all(|t| t == USER_TOKEN));
}

#[tokio::test]
async fn concurrent_callers_share_a_failed_fetch() {
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = fetches.clone();
    let provider = CachedToken::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Err::<(String, Duration), _>(CredentialsError("token endpoint: HTTP 503".into()))
        }
    });

    let results = join_all((0..10).map(|_| provider.token())).await;

    assert!(results.iter().all(Result::is_err));
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        1,
        "one fetch, one error for all"
    );
    // The next call tries again.
    provider.token().await.expect_err("still failing");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

/// Lifetime 1 s, refresh 300 ms ahead: due at 700 ms.
#[tokio::test]
async fn refreshes_ahead_of_expiry() {
    let (fetches, provider) = sequence(&["first", "second"], Duration::from_secs(1));
    let provider = provider.refresh_ahead(Duration::from_millis(300));

    assert_eq!(token(&provider).await, "first");
    assert_eq!(token(&provider).await, "first", "before the refresh point");
    assert_eq!(fetches.load(Ordering::SeqCst), 1);

    tokio::time::sleep(Duration::from_millis(750)).await;
    assert_eq!(token(&provider).await, "second", "after the refresh point");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
    assert_eq!(token(&provider).await, "second");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

/// Once a token is due, the call that refreshes it waits; the others keep using it until
/// it expires, and so does that call if the refresh fails.
#[tokio::test]
async fn a_due_token_serves_while_it_is_refreshed_and_if_the_refresh_fails() {
    let gate = Arc::new(futures_util::lock::Mutex::new(()));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (counter, fetch_gate) = (fetches.clone(), gate.clone());
    // Lifetime 1 s, due at 500 ms; the second fetch fails once the gate opens.
    let provider = CachedToken::new(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let gate = fetch_gate.clone();
        async move {
            if n == 0 {
                return Ok(("first".to_string(), Duration::from_secs(1)));
            }
            drop(gate.lock().await);
            Err(CredentialsError("token endpoint: HTTP 503".into()))
        }
    })
    .refresh_ahead(Duration::from_millis(500));
    assert_eq!(token(&provider).await, "first");

    tokio::time::sleep(Duration::from_millis(550)).await;
    let closed = gate.lock().await;
    let refreshing = provider.clone();
    let refresh = tokio::spawn(async move { token(&refreshing).await });
    while fetches.load(Ordering::SeqCst) < 2 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let meanwhile = tokio::time::timeout(Duration::from_secs(5), token(&provider))
        .await
        .expect("no wait for the refresh in flight");
    assert_eq!(meanwhile, "first");
    assert!(format!("{provider:?}").contains("refreshing: true"));

    drop(closed);
    assert_eq!(
        refresh.await.unwrap(),
        "first",
        "the failed refresh falls back"
    );
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn invalidate_drops_only_the_refused_token() {
    let (fetches, provider) = sequence(&["first", "second"], HOUR);
    assert_eq!(token(&provider).await, "first");

    assert!(provider.invalidate(&SecretString::from("another")));
    assert_eq!(
        token(&provider).await,
        "first",
        "not the cached token: kept"
    );
    assert_eq!(fetches.load(Ordering::SeqCst), 1);

    // Two calls report the same refused token: one refresh.
    assert!(provider.invalidate(&SecretString::from("first")));
    assert_eq!(token(&provider).await, "second");
    assert!(provider.invalidate(&SecretString::from("first")));
    assert_eq!(token(&provider).await, "second");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

// ------------------------------------------------------------------------------ refused tokens

#[tokio::test]
async fn a_refused_user_token_is_refreshed_once_and_the_call_repeated() {
    let server = lent_locks_server().await;
    let (fetches, user) = sequence(&["stale", USER_TOKEN], HOUR);
    let client = member_client(&server.uri(), user, RetryPolicy::Never);

    client
        .list_lent_locks()
        .enterprise_global_id(EG)
        .await
        .expect("succeeds with the refreshed token, whatever the retry policy");

    assert_eq!(fetches.load(Ordering::SeqCst), 2);
    let requests = received(&server).await;
    assert_eq!(user_tokens_sent(&requests), ["stale", USER_TOKEN]);
    assert_unique_nonces(&requests);
}

/// The refused request was not applied, so even an operation that must not be repeated
/// after a lost reply is sent again; the client token is the one refreshed on `60000`.
#[tokio::test]
async fn a_refused_client_token_is_refreshed_for_a_non_idempotent_operation() {
    assert!(!op("addMembers").idempotent);
    let server = MockServer::start().await;
    mock("addMembers", &[EG])
        .and(header("clienttoken", "stale-client"))
        .respond_with(refused("60000"))
        .mount(&server)
        .await;
    mock("addMembers", &[EG])
        .and(header("clienttoken", CLIENT_TOKEN))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply_example("addMembers")))
        .mount(&server)
        .await;
    let (client_fetches, client_token) = sequence(&["stale-client", CLIENT_TOKEN], HOUR);
    let (user_fetches, user_token) = sequence(&[USER_TOKEN], HOUR);
    let client = member::Client::builder(&server.uri())
        .client_token_provider(client_token)
        .user_token_provider(user_token)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();

    client
        .add_members()
        .enterprise_global_id(EG)
        .body(body_example::<member::types::AddMembersRequest>())
        .await
        .expect("succeeds with the refreshed client token");

    assert_eq!(client_fetches.load(Ordering::SeqCst), 2);
    assert_eq!(
        user_fetches.load(Ordering::SeqCst),
        1,
        "the user token was fine"
    );
    let requests = received_n(&server, 2).await;
    assert_unique_nonces(&requests);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn a_token_refused_twice_fails_after_one_refresh() {
    let server = MockServer::start().await;
    mock("listLentLocks", &[EG])
        .respond_with(refused("60005"))
        .mount(&server)
        .await;
    let (fetches, user) = sequence(&["stale", "also-stale"], HOUR);
    // A policy that would repeat a retryable failure: a refusal is not one.
    let client = member_client(&server.uri(), user, fast_retry(4));

    let error = client
        .list_lent_locks()
        .enterprise_global_id(EG)
        .await
        .expect_err("refused twice");

    assert_eq!(
        error.code(),
        Some(&ErrorCode::UserTokenInvalid),
        "{error:?}"
    );
    assert_eq!(fetches.load(Ordering::SeqCst), 2, "one refresh");
    let requests = received(&server).await;
    assert_eq!(user_tokens_sent(&requests), ["stale", "also-stale"]);
}

/// Both member tokens expired: the member center refuses the client token (`60000`), then,
/// with a new one, the user token (`60005`); each is replaced once and the call succeeds.
#[tokio::test]
async fn both_refused_member_tokens_are_refreshed() {
    let server = MockServer::start().await;
    mock("listLentLocks", &[EG])
        .and(header("clienttoken", "stale-client"))
        .respond_with(refused("60000"))
        .mount(&server)
        .await;
    mock("listLentLocks", &[EG])
        .and(header("clienttoken", CLIENT_TOKEN))
        .and(header("usertoken", "stale"))
        .respond_with(refused("60005"))
        .mount(&server)
        .await;
    mock("listLentLocks", &[EG])
        .and(header("clienttoken", CLIENT_TOKEN))
        .and(header("usertoken", USER_TOKEN))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply_example("listLentLocks")))
        .mount(&server)
        .await;
    let (client_fetches, client_token) = sequence(&["stale-client", CLIENT_TOKEN], HOUR);
    let (user_fetches, user_token) = sequence(&["stale", USER_TOKEN], HOUR);
    let client = member::Client::builder(&server.uri())
        .client_token_provider(client_token)
        .user_token_provider(user_token)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();

    client
        .list_lent_locks()
        .enterprise_global_id(EG)
        .await
        .expect("succeeds with both tokens refreshed");

    assert_eq!(client_fetches.load(Ordering::SeqCst), 2);
    assert_eq!(user_fetches.load(Ordering::SeqCst), 2);
    let requests = received(&server).await;
    let sent: Vec<(String, String)> = requests
        .iter()
        .map(|r| {
            let h = |name: &str| r.headers[name].to_str().unwrap().to_string();
            (h("clienttoken"), h("usertoken"))
        })
        .collect();
    let pair = |c: &str, u: &str| (c.to_string(), u.to_string());
    assert_eq!(
        sent,
        [
            pair("stale-client", "stale"),
            pair(CLIENT_TOKEN, "stale"),
            pair(CLIENT_TOKEN, USER_TOKEN),
        ]
    );
    assert_unique_nonces(&requests);
}

/// Each token is replaced once per call: a client token refused again after both were
/// replaced is the call's error, after three requests.
#[tokio::test]
async fn a_token_refused_after_both_were_replaced_is_the_error() {
    let server = MockServer::start().await;
    mock("listLentLocks", &[EG])
        .and(header("usertoken", "stale"))
        .respond_with(refused("60005"))
        .mount(&server)
        .await;
    mock("listLentLocks", &[EG])
        .and(header("usertoken", USER_TOKEN))
        .respond_with(refused("60000"))
        .mount(&server)
        .await;
    let (client_fetches, client_token) = sequence(&["client-1", "client-2", "client-3"], HOUR);
    let (user_fetches, user_token) = sequence(&["stale", USER_TOKEN], HOUR);
    let client = member::Client::builder(&server.uri())
        .client_token_provider(client_token)
        .user_token_provider(user_token)
        .retry(fast_retry(4))
        .build()
        .unwrap();

    let error = client
        .list_lent_locks()
        .enterprise_global_id(EG)
        .await
        .expect_err("the replaced client token is refused too");

    assert_eq!(error.code(), Some(&ErrorCode::ApplicationTokenInvalid));
    assert_eq!(client_fetches.load(Ordering::SeqCst), 2, "one refresh each");
    assert_eq!(user_fetches.load(Ordering::SeqCst), 2);
    let requests = received(&server).await;
    let clients: Vec<&str> = requests
        .iter()
        .map(|r| r.headers["clienttoken"].to_str().unwrap())
        .collect();
    assert_eq!(clients, ["client-1", "client-1", "client-2"]);
}

/// The simulator checks the client token first, as the member center does: both stale
/// tokens are replaced and the call gets past authentication.
#[tokio::test]
async fn the_simulator_accepts_both_refreshed_tokens() {
    let sim = licensing_sim::Simulator::builder()
        .client_token("fresh-client-token")
        .user_token("fresh-user-token")
        .start()
        .await
        .expect("simulator");
    let (client_fetches, client_token) = sequence(&["stale-client", "fresh-client-token"], HOUR);
    let (user_fetches, user_token) = sequence(&["stale", "fresh-user-token"], HOUR);
    let client = member::Client::builder(&sim.url())
        .client_token_provider(client_token)
        .user_token_provider(user_token)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();

    let result = client.list_lent_locks().enterprise_global_id(EG).await;

    assert_eq!(
        result.as_ref().err().and_then(Error::code),
        Some(&ErrorCode::NotBoundToLicensingCustomer),
        "{result:?}"
    );
    assert_eq!(client_fetches.load(Ordering::SeqCst), 2);
    assert_eq!(user_fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn calls_refused_together_cause_one_refresh() {
    let server = lent_locks_server().await;
    let (fetches, user) = sequence(&["stale", USER_TOKEN], HOUR);
    let client = member_client(&server.uri(), user, RetryPolicy::Never);

    let results =
        join_all((0..5).map(|_| async { client.list_lent_locks().enterprise_global_id(EG).await }))
            .await;

    for result in results {
        result.expect("listLentLocks succeeds");
    }
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        2,
        "one refresh for 5 refusals"
    );
    assert_eq!(received(&server).await.len(), 10);
}

/// A static token cannot be replaced: its refusal is the call's error, sent once.
#[tokio::test]
async fn a_refused_static_token_is_not_repeated() {
    let server = MockServer::start().await;
    mock("listLentLocks", &[EG])
        .respond_with(refused("60005"))
        .mount(&server)
        .await;
    let client = member::Client::builder(&server.uri())
        .client_token(CLIENT_TOKEN)
        .user_token("stale")
        .retry(fast_retry(4))
        .build()
        .unwrap();

    let error = client
        .list_lent_locks()
        .enterprise_global_id(EG)
        .await
        .expect_err("refused");

    assert_eq!(error.code(), Some(&ErrorCode::UserTokenInvalid));
    assert_eq!(received(&server).await.len(), 1);
}

/// The simulator refuses a user token other than the one it was started with (`60005`),
/// as the member center does.
#[tokio::test]
async fn the_simulator_accepts_the_refreshed_token() {
    let sim = licensing_sim::Simulator::builder()
        .user_token("fresh-user-token")
        .start()
        .await
        .expect("simulator");
    let (fetches, user) = sequence(&["stale", "fresh-user-token"], HOUR);
    let client = member::Client::builder(&sim.url())
        .client_token(licensing_sim::DEFAULT_CLIENT_TOKEN)
        .user_token_provider(user)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();

    let result = client.list_lent_locks().enterprise_global_id(EG).await;

    // Past authentication: an empty simulator knows no enterprise.
    assert_eq!(
        result.as_ref().err().and_then(Error::code),
        Some(&ErrorCode::NotBoundToLicensingCustomer),
        "{result:?}"
    );
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

// ------------------------------------------------------------------------------ secrecy

const SECRET: &str = "user-SECRET-c41e9b";

#[tokio::test]
async fn a_fetch_error_is_a_credentials_error_without_the_token() {
    let server = unreachable().await;
    // The first fetch gives a token that expires at once; the next one fails.
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = fetches.clone();
    let user = CachedToken::new(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            match n {
                0 => Ok((SECRET.to_string(), Duration::ZERO)),
                _ => Err(CredentialsError("token endpoint: HTTP 503".into())),
            }
        }
    });
    assert_eq!(token(&user).await, SECRET);
    let client = member_client(&server.uri(), user, fast_retry(3));

    let error = client
        .list_lent_locks()
        .enterprise_global_id(EG)
        .await
        .expect_err("no token");

    assert!(matches!(error, Error::Credentials(_)), "{error:?}");
    let shown = format!("{error} {error:?}");
    assert!(shown.contains("token endpoint: HTTP 503"), "{shown}");
    assert!(!shown.contains("SECRET"), "{shown}");
    assert_eq!(fetches.load(Ordering::SeqCst), 2, "not retried");
}

#[tokio::test]
async fn debug_shows_no_token() {
    let (_, provider) = sequence(&[SECRET], HOUR);
    assert!(format!("{provider:?}").contains("cached: false"));

    token(&provider).await;
    let shown = format!("{provider:?} {provider:#?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(
        shown.contains("[REDACTED]") && shown.contains("cached: true"),
        "{shown}"
    );

    let client = member_client("http://127.0.0.1:9", provider, RetryPolicy::Never);
    assert!(!format!("{client:?}").contains("SECRET"));
}
