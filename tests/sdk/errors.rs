//! Business errors, retries and protocol failures of both services.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use crate::common::*;
use licensing_sdk::{ApiError, Error, ErrorCode, RetryPolicy, member, operations, order};
use licensing_test_support::raw::RawServer;
use serde_json::{Value, json};
use wiremock::{MockServer, ResponseTemplate};

/// The path values `call_operation` sends.
const EG: &str = "EG-7f3a";
const MG: &str = "MG-2";

fn api(result: Result<impl std::fmt::Debug, Error>) -> ApiError {
    match result {
        Err(Error::Api(e)) => e,
        other => panic!("expected Error::Api, got {other:?}"),
    }
}

fn network_exception() -> Value {
    json!({"code": "500", "message": "network exception, retry", "cause": "upstream timeout"})
}

// ------------------------------------------------------------------------------ business errors

#[tokio::test]
async fn order_business_error_at_http_299() {
    let server = MockServer::start().await;
    let example = error_example("bindEnterprise");
    reply(&server, "bindEnterprise", &[], 299, example.clone()).await;
    let client = order_client(&server.uri());

    let result = client
        .bind_enterprise()
        .body(body_example::<order::types::BindEnterpriseRequest>())
        .await;

    let e = api(result);
    assert_eq!(e.operation, "bindEnterprise");
    assert_eq!(e.code, ErrorCode::ParameterValidationFailed);
    assert_eq!(e.code.as_str(), example["code"]);
    assert_eq!(e.message, example["message"]);
    assert_eq!(e.cause.as_deref(), example["cause"].as_str());
    assert_eq!(e.http_status, 299);
    let shown = e.to_string();
    for part in [
        "bindEnterprise",
        "13004",
        e.message.as_str(),
        e.cause.as_deref().unwrap(),
    ] {
        assert!(shown.contains(part), "{shown:?} lacks {part:?}");
    }
}

#[tokio::test]
async fn member_business_error_at_http_299() {
    let server = MockServer::start().await;
    let example = error_example("editMember");
    reply(&server, "editMember", &[EG, MG], 299, example.clone()).await;
    let client = member_client(&server.uri());

    let result = client
        .edit_member()
        .enterprise_global_id("EG-7f3a")
        .member_global_id("MG-2")
        .body(body_example::<member::types::EditMemberRequest>())
        .await;

    let e = api(result);
    assert_eq!(e.operation, "editMember");
    assert_eq!(e.code, ErrorCode::UserNotFound);
    assert_eq!(e.message, example["message"]);
    assert_eq!(e.cause.as_deref(), example["cause"].as_str());
    assert_eq!(e.http_status, 299);
}

/// Every operation's documented HTTP 299 example becomes the documented error.
#[tokio::test]
async fn every_documented_error_example_decodes() {
    for op in operations::ALL {
        let id = op.id;
        let server = MockServer::start().await;
        let example = error_example(id);
        answer_any(
            &server,
            ResponseTemplate::new(299).set_body_json(example.clone()),
            None,
        )
        .await;
        let (o, m) = (order_client(&server.uri()), member_client(&server.uri()));

        let error = match call_operation(&o, &m, id).await {
            Err(Error::Api(e)) => e,
            Err(Error::PartialFailure { error, result }) => {
                assert_eq!(
                    op.partial_success_code,
                    Some(error.code.as_str()),
                    "{id}: only a partial-success code reports partial success"
                );
                assert_eq!(id, "addMembers", "only addMembers reports partial success");
                assert!(!result.succeeded.is_empty() && !result.failed.is_empty());
                error
            }
            other => panic!("{id}: expected a business error, got {other:?}"),
        };
        assert_eq!(error.operation, id);
        assert!(error.code.is_known(), "{id}: {} is documented", error.code);
        assert_eq!(error.code.as_str(), example["code"], "{id}");
        assert_eq!(error.message, example["message"], "{id}");
        assert_eq!(error.cause.as_deref(), example["cause"].as_str(), "{id}");
        assert_eq!(error.http_status, 299, "{id}");
        assert_eq!(received(&server).await.len(), 1, "{id}: not retried");
    }
}

#[tokio::test]
async fn string_code_at_http_200_is_an_error_too() {
    let server = MockServer::start().await;
    reply(
        &server,
        "allocateShellNums",
        &[],
        200,
        json!({"code": "13004", "message": "parameter validation failure", "cause": "size"}),
    )
    .await;
    reply(
        &server,
        "lendAssets",
        &[MG],
        200,
        json!({"code": "33006", "message": "insufficient nodes", "data": null}),
    )
    .await;
    let (o, m) = (order_client(&server.uri()), member_client(&server.uri()));

    let e = api(call_operation(&o, &m, "allocateShellNums").await);
    assert_eq!(e.code, ErrorCode::ParameterValidationFailed);
    assert_eq!(e.http_status, 200);
    assert_eq!(e.cause.as_deref(), Some("size"));

    let e = api(call_operation(&o, &m, "lendAssets").await);
    assert_eq!(e.code, ErrorCode::InsufficientNodes);
    assert_eq!(e.message, "insufficient nodes");
    assert_eq!(e.cause, None);
    assert_eq!(e.http_status, 200);
}

/// A non-zero integer code is no success either.
#[tokio::test]
async fn non_zero_integer_code_is_an_error() {
    let server = MockServer::start().await;
    reply(
        &server,
        "queryEnterprise",
        &[],
        200,
        json!({"code": 13004, "message": "parameter validation failure"}),
    )
    .await;
    let e = api(call_operation(
        &order_client(&server.uri()),
        &member_client(&server.uri()),
        "queryEnterprise",
    )
    .await);
    assert_eq!(e.code, ErrorCode::ParameterValidationFailed);
    assert_eq!(e.http_status, 200);
}

#[tokio::test]
async fn unknown_codes_are_kept_as_other() {
    let server = MockServer::start().await;
    reply(
        &server,
        "allocateShellNums",
        &[],
        299,
        json!({"code": "13999", "message": "quota exceeded", "cause": "daily limit"}),
    )
    .await;
    reply(
        &server,
        "lendAssets",
        &[MG],
        299,
        json!({"code": "99001", "message": "maintenance"}),
    )
    .await;
    let (o, m) = (order_client(&server.uri()), member_client(&server.uri()));

    let e = api(call_operation(&o, &m, "allocateShellNums").await);
    assert_eq!(e.code, ErrorCode::Other("13999".into()));
    assert!(!e.code.is_known());
    assert_eq!(e.message, "quota exceeded");
    assert!(e.to_string().contains("13999"));

    let e = api(call_operation(&o, &m, "lendAssets").await);
    assert_eq!(e.code, ErrorCode::Other("99001".into()));
    assert_eq!(e.http_status, 299);
}

#[tokio::test]
async fn partial_success_carries_both_lists() {
    let server = MockServer::start().await;
    let example = error_example("addMembers");
    assert_eq!(example["code"], "60027");
    assert_eq!(op("addMembers").partial_success_code, Some("60027"));
    reply(&server, "addMembers", &[EG], 299, example.clone()).await;

    let result = call_operation(
        &order_client(&server.uri()),
        &member_client(&server.uri()),
        "addMembers",
    )
    .await;

    let error = result.expect_err("60027 is an error");
    assert_eq!(error.code(), Some(&ErrorCode::PartialAddFailure));
    let shown = error.to_string();
    let Error::PartialFailure { error, result } = error else {
        panic!("expected Error::PartialFailure, got {error:?}");
    };
    assert_eq!(error.operation, "addMembers");
    assert_eq!(error.http_status, 299);
    assert_eq!(error.message, example["message"]);
    assert_eq!(error.cause.as_deref(), example["cause"].as_str());
    let data = &example["data"];
    assert_decodes_example(&*result, data);
    assert_eq!(result.succeeded.len(), 1);
    assert_eq!(
        result.succeeded[0].global_id,
        data["succeeded"][0]["globalId"]
    );
    assert_eq!(result.succeeded[0].department_id, None);
    assert_eq!(result.failed.len(), 1);
    assert_eq!(result.failed[0].user_name, data["failed"][0]["userName"]);
    assert_eq!(result.failed[0].message, data["failed"][0]["message"]);
    assert!(shown.contains("1 added, 1 failed"), "{shown}");
    assert_eq!(
        received(&server).await.len(),
        1,
        "a partial success is not retried"
    );
}

// ------------------------------------------------------------------------------ retries

/// Code 500 ("network exception, retry") is retried for every operation, even a
/// non-idempotent one, each attempt with a new nonce.
#[tokio::test]
async fn code_500_is_retried_until_success() {
    let server = MockServer::start().await;
    for (id, values) in [("allocateShellNums", &[][..]), ("lendAssets", &[MG])] {
        assert!(!op(id).idempotent, "{id}");
        mock(id, values)
            .respond_with(ResponseTemplate::new(299).set_body_json(network_exception()))
            .up_to_n_times(2)
            .mount(&server)
            .await;
    }
    reply_documented(&server, "allocateShellNums").await;
    reply_ok(&server, "lendAssets", &[MG]).await;
    let o = order_client_with(&server.uri(), fast_retry(4));
    let m = member_client_with(&server.uri(), fast_retry(4));

    let numbers = o
        .allocate_shell_nums()
        .body(body_example::<order::types::AllocateShellNumsRequest>())
        .await
        .expect("third attempt succeeds");
    assert_eq!(numbers.len(), 3);
    call_operation(&o, &m, "lendAssets")
        .await
        .expect("third attempt succeeds");

    let requests = received(&server).await;
    for p in [
        op("allocateShellNums").path_with(&[]),
        op("lendAssets").path_with(&[MG]),
    ] {
        let attempts: Vec<_> = requests
            .iter()
            .filter(|r| r.url.path() == p)
            .cloned()
            .collect();
        assert_eq!(attempts.len(), 3, "{p}: two code-500 replies, then success");
        assert_unique_nonces(&attempts);
    }
}

#[tokio::test]
async fn code_500_retries_stop_at_max_attempts() {
    let server = MockServer::start().await;
    reply(&server, "batchOrder", &[], 299, network_exception()).await;
    let o = order_client_with(&server.uri(), fast_retry(3));
    let m = member_client(&server.uri());

    let e = api(call_operation(&o, &m, "batchOrder").await);
    assert_eq!(e.code, ErrorCode::NetworkException);
    assert_eq!(e.cause.as_deref(), Some("upstream timeout"));

    let requests = received_n(&server, 3).await;
    assert_unique_nonces(&requests);
    // The body is serialized once per call: every attempt sends the same JSON bytes.
    assert!(requests[0].body.len() > 100, "a whole batch was sent");
    for r in &requests {
        assert_eq!(r.body, requests[0].body);
        assert_eq!(
            r.headers.get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
    }
}

#[tokio::test]
async fn never_policy_does_not_retry_code_500() {
    let server = MockServer::start().await;
    reply(&server, "queryEnterprise", &[], 299, network_exception()).await;
    let o = order_client_with(&server.uri(), RetryPolicy::Never);
    let e = api(call_operation(&o, &member_client(&server.uri()), "queryEnterprise").await);
    assert_eq!(e.code, ErrorCode::NetworkException);
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn other_business_errors_are_not_retried() {
    let server = MockServer::start().await;
    reply(
        &server,
        "queryEnterprise",
        &[],
        299,
        error_example("bindEnterprise"),
    )
    .await;
    let o = order_client_with(&server.uri(), fast_retry(4));
    let e = api(call_operation(&o, &member_client(&server.uri()), "queryEnterprise").await);
    assert_eq!(e.code, ErrorCode::ParameterValidationFailed);
    assert_eq!(received(&server).await.len(), 1);
}

fn quick_timeout_order(uri: &str) -> order::Client {
    order::Client::builder(uri)
        .application_token(APP_TOKEN)
        .timeout(Duration::from_millis(200))
        .retry(fast_retry(3))
        .build()
        .expect("order client")
}

/// A timed-out attempt may have been applied: a non-idempotent operation is not repeated.
#[tokio::test]
async fn timeout_is_not_retried_for_non_idempotent_operations() {
    let server = MockServer::start().await;
    for id in ["allocateShellNums", "batchOrder"] {
        assert!(!op(id).idempotent, "{id}");
        mock(id, &[])
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(reply_example("allocateShellNums"))
                    .set_delay(Duration::from_millis(1500)),
            )
            .mount(&server)
            .await;
    }
    let o = quick_timeout_order(&server.uri());
    let m = member_client(&server.uri());

    let (shell, batch) = tokio::join!(
        call_operation(&o, &m, "allocateShellNums"),
        call_operation(&o, &m, "batchOrder"),
    );
    for (result, id) in [(shell, "allocateShellNums"), (batch, "batchOrder")] {
        let p = op(id).path_with(&[]);
        match result {
            Err(Error::Transport { source, .. }) => assert!(source.is_timeout(), "{source}"),
            other => panic!("{p}: expected a timeout, got {other:?}"),
        }
        let attempts = received(&server)
            .await
            .into_iter()
            .filter(|r| r.url.path() == p)
            .count();
        assert_eq!(attempts, 1, "{p} must not be repeated after a timeout");
    }
}

/// The same timeout on an idempotent operation is repeated, with a new nonce.
#[tokio::test]
async fn timeout_is_retried_for_idempotent_operations() {
    assert!(op("queryEnterprise").idempotent);
    let server = MockServer::start().await;
    mock("queryEnterprise", &[])
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(reply_example("queryEnterprise"))
                .set_delay(Duration::from_millis(1500)),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    reply_documented(&server, "queryEnterprise").await;
    let o = quick_timeout_order(&server.uri());

    call_operation(&o, &member_client(&server.uri()), "queryEnterprise")
        .await
        .expect("the second attempt succeeds");

    let requests = received_n(&server, 2).await;
    assert_unique_nonces(&requests);
}

/// A refused connection never reached the server: every operation is repeated. The
/// token provider is asked once per attempt, which counts the attempts.
#[tokio::test]
async fn connection_refused_is_retried_for_non_idempotent_operations() {
    let url = refused_url();
    let (asked, provider) = counting_provider(APP_TOKEN);
    let o = order::Client::builder(&url)
        .application_token_provider(provider)
        .retry(fast_retry(3))
        .build()
        .expect("order client");
    let (client_asked, client_provider) = counting_provider(CLIENT_TOKEN);
    let m = member::Client::builder(&url)
        .client_token_provider(client_provider)
        .user_token(USER_TOKEN)
        .retry(fast_retry(4))
        .build()
        .expect("member client");

    for (id, count, expected) in [
        ("allocateShellNums", &asked, 3),
        ("addMembers", &client_asked, 4),
    ] {
        assert!(!op(id).idempotent, "{id}");
        match call_operation(&o, &m, id).await {
            Err(Error::Transport {
                operation,
                source,
                kind,
                may_have_been_sent,
            }) => {
                assert_eq!(operation, id);
                assert!(source.is_connect(), "{source}");
                assert_eq!(kind, licensing_sdk::TransportKind::ConnectRefused);
                assert!(!may_have_been_sent);
            }
            other => panic!("{id}: expected a transport error, got {other:?}"),
        }
        assert_eq!(count.load(Ordering::SeqCst), expected, "{id}: attempts");
    }
}

/// A server that reads each request, then closes the connection without a reply.
fn hanging_up_server() -> (String, Arc<AtomicUsize>) {
    let server = RawServer::start(|stream, _| drop(stream));
    (server.url, server.requests)
}

/// A reply lost after the request was sent: repeated only for idempotent operations.
#[tokio::test]
async fn dropped_reply_is_retried_only_for_idempotent_operations() {
    let (url, requests) = hanging_up_server();
    let o = order_client_with(&url, fast_retry(3));
    let m = member_client_with(&url, fast_retry(3));
    assert!(!op("lendAssets").idempotent && op("listVirtualAssets").idempotent);

    let result = call_operation(&o, &m, "lendAssets").await;
    assert!(
        matches!(&result, Err(Error::Transport { source, .. }) if !source.is_connect()),
        "{result:?}"
    );
    assert_eq!(
        requests.load(Ordering::SeqCst),
        1,
        "lendAssets is not idempotent"
    );

    let result = call_operation(&o, &m, "listVirtualAssets").await;
    assert!(matches!(result, Err(Error::Transport { .. })), "{result:?}");
    assert_eq!(
        requests.load(Ordering::SeqCst),
        1 + 3,
        "listVirtualAssets is idempotent"
    );
}

/// For every operation, a lost reply is repeated exactly when the spec marks the
/// operation `x-idempotent: true` (the table's `idempotent`).
#[tokio::test]
async fn dropped_reply_retry_follows_x_idempotent_for_every_operation() {
    let (url, requests) = hanging_up_server();
    let o = order_client_with(&url, fast_retry(2));
    let m = member_client_with(&url, fast_retry(2));
    let mut idempotent = 0;
    for op in operations::ALL {
        let (id, repeatable) = (op.id, op.idempotent);
        idempotent += usize::from(repeatable);
        let before = requests.load(Ordering::SeqCst);
        let result = call_operation(&o, &m, id).await;
        assert!(
            matches!(result, Err(Error::Transport { .. })),
            "{id}: {result:?}"
        );
        let attempts = requests.load(Ordering::SeqCst) - before;
        assert_eq!(
            attempts,
            if repeatable { 2 } else { 1 },
            "{id} (x-idempotent: {repeatable})"
        );
    }
    assert!(
        idempotent > 0 && idempotent < operations::ALL.len(),
        "both kinds covered"
    );
}

// ------------------------------------------------------------------------------ protocol failures

#[tokio::test]
async fn malformed_json_is_a_decode_error() {
    let server = MockServer::start().await;
    mock("queryEnterprise", &[])
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(r#"{"code": 0, "message": "succ"#, "application/json"),
        )
        .mount(&server)
        .await;
    mock("lendAssets", &[MG])
        .respond_with(
            ResponseTemplate::new(299)
                .set_body_raw(format!("<html>{}</html>", "busy ".repeat(100)), "text/html"),
        )
        .mount(&server)
        .await;
    let o = order_client_with(&server.uri(), fast_retry(3));
    let m = member_client_with(&server.uri(), fast_retry(3));

    match call_operation(&o, &m, "queryEnterprise").await {
        Err(Error::Decode {
            operation,
            status,
            reason,
            excerpt,
        }) => {
            assert_eq!(operation, "queryEnterprise");
            assert_eq!(status, 200);
            assert!(!reason.is_empty());
            assert_eq!(excerpt, r#"{"code": 0, "message": "succ"#);
        }
        other => panic!("expected Error::Decode, got {other:?}"),
    }
    match call_operation(&o, &m, "lendAssets").await {
        Err(e @ Error::Decode { .. }) => {
            let shown = e.to_string();
            let Error::Decode {
                operation,
                status,
                excerpt,
                ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!(operation, "lendAssets");
            assert_eq!(status, 299);
            assert!(excerpt.starts_with("<html>busy busy"), "{excerpt:?}");
            assert!(excerpt.len() <= 200, "an excerpt, not the whole body");
            assert!(
                shown.contains("299") && shown.contains("<html>busy"),
                "{shown}"
            );
        }
        other => panic!("expected Error::Decode, got {other:?}"),
    }
    assert_eq!(
        received(&server).await.len(),
        2,
        "decode errors are not retried"
    );
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_a_decode_error() {
    let server = MockServer::start().await;
    reply(
        &server,
        "bindEnterprise",
        &[],
        200,
        json!({"code": 0, "message": "success", "data": {"customerId": 42}}),
    )
    .await;
    reply(
        &server,
        "createEnterprise",
        &[],
        200,
        json!({"code": 0, "message": "success"}),
    )
    .await;
    let (o, m) = (order_client(&server.uri()), member_client(&server.uri()));

    let result = call_operation(&o, &m, "bindEnterprise").await;
    assert!(
        matches!(&result, Err(Error::Decode { status: 200, excerpt, .. }) if excerpt.contains("customerId")),
        "{result:?}"
    );
    // A success without the documented `data`.
    let result = call_operation(&o, &m, "createEnterprise").await;
    assert!(
        matches!(&result, Err(Error::Decode { operation: "createEnterprise", status: 200, reason, .. }) if reason.contains("data")),
        "{result:?}"
    );
}

#[tokio::test]
async fn undocumented_http_status_is_unexpected() {
    let server = MockServer::start().await;
    mock("queryEnterprise", &[])
        .respond_with(ResponseTemplate::new(500).set_body_string("Internal Server Error"))
        .mount(&server)
        .await;
    mock("editMember", &[EG, MG])
        .respond_with(ResponseTemplate::new(404).set_body_string("no route"))
        .mount(&server)
        .await;
    // Even a body that looks like a business error does not make a 502 one.
    mock("lendAssets", &[MG])
        .respond_with(ResponseTemplate::new(502).set_body_json(network_exception()))
        .mount(&server)
        .await;
    let o = order_client_with(&server.uri(), fast_retry(3));
    let m = member_client_with(&server.uri(), fast_retry(3));

    for (id, expected_status, expected_excerpt) in [
        ("queryEnterprise", 500, "Internal Server Error"),
        ("editMember", 404, "no route"),
        ("lendAssets", 502, r#""code":"500""#),
    ] {
        match call_operation(&o, &m, id).await {
            Err(e @ Error::UnexpectedStatus { .. }) => {
                assert!(e.to_string().contains(&expected_status.to_string()));
                let Error::UnexpectedStatus {
                    operation,
                    status,
                    excerpt,
                } = e
                else {
                    unreachable!()
                };
                assert_eq!(operation, id);
                assert_eq!(status, expected_status);
                assert!(excerpt.contains(expected_excerpt), "{id}: {excerpt:?}");
            }
            other => panic!("{id}: expected Error::UnexpectedStatus, got {other:?}"),
        }
    }
    // HTTP 500/502/503/504 may have been applied: repeated only on idempotent operations
    // (queryEnterprise: 3 attempts); a 404 is final; lendAssets cannot be repeated.
    assert_eq!(received(&server).await.len(), 3 + 1 + 1);
}

/// Each operation's error-code enum holds exactly its documented codes, and `of` reads an
/// error of that operation only.
#[tokio::test]
async fn per_operation_error_codes() {
    use licensing_sdk::{
        member::errors::{AddMembersErrorCode, DeleteMemberErrorCode},
        order::errors::AllocateShellNumsErrorCode,
    };
    let sim = licensing_sim::Simulator::start().await.unwrap();
    let members = member::Client::builder(&sim.url())
        .client_token(licensing_sim::DEFAULT_CLIENT_TOKEN)
        .user_token(licensing_sim::DEFAULT_USER_TOKEN)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let member: member::types::NewMember = member::types::NewMember::builder()
        .user_name("alice")
        .password("Secret-123")
        .name("Alice")
        .try_into()
        .unwrap();
    let e = members
        .add_members()
        .enterprise_global_id("EG-none")
        .body(member::types::AddMembersRequest::builder().user_list(vec![member]))
        .await
        .unwrap_err();
    assert_eq!(
        AddMembersErrorCode::of(&e),
        Some(AddMembersErrorCode::EnterpriseSuffixEmpty)
    );
    assert_eq!(AddMembersErrorCode::of(&e).unwrap().as_str(), "40006");
    assert_eq!(
        DeleteMemberErrorCode::of(&e),
        None,
        "another operation's error"
    );
    assert_eq!(
        AddMembersErrorCode::from(&ErrorCode::from("12345")),
        AddMembersErrorCode::Other(ErrorCode::from("12345"))
    );
    // Codes documented for another operation only are `Other` here.
    assert!(matches!(
        AllocateShellNumsErrorCode::from(&ErrorCode::TrialMemberLimit),
        AllocateShellNumsErrorCode::Other(_)
    ));
    // Every documented code of every operation maps to its own variant.
    for op in operations::ALL {
        for code in op.error_codes {
            let code = ErrorCode::from(*code);
            assert!(code.is_known(), "{}: {code}", op.id);
        }
    }
    sim.shutdown().await.unwrap();
}
