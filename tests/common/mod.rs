//! Helpers shared by the wire, error, validation, secrets, tolerance and paging tests.
//!
//! Reply examples are read from `spec/*.yaml` at test time, so the tests and the spec
//! cannot drift apart.

#![allow(dead_code)]

use std::{
    collections::HashSet,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use licensing_sdk::{
    Backoff, RetryPolicy,
    auth::{SecretString, TokenFuture},
    member, order,
};
use serde_json::Value;
use wiremock::{
    Mock, MockServer, Request, ResponseTemplate,
    matchers::{method, path},
};

pub const APP_TOKEN: &str = "app-token-Q9xR2";
pub const CLIENT_TOKEN: &str = "client-token-K7pL4";
pub const USER_TOKEN: &str = "user-token-Z3mN8";

// ------------------------------------------------------------------------------ spec

/// The parsed spec of `service` (`order` or `member`).
pub fn spec(service: &str) -> &'static Value {
    static ORDER: OnceLock<Value> = OnceLock::new();
    static MEMBER: OnceLock<Value> = OnceLock::new();
    let cell = match service {
        "order" => &ORDER,
        "member" => &MEMBER,
        other => panic!("no spec for service {other}"),
    };
    cell.get_or_init(|| {
        let file = format!("{}/spec/{service}.yaml", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
    })
}

/// `(METHOD, path template, operation object)` of the operation with this `operationId`.
pub fn operation(service: &str, id: &str) -> (String, String, &'static Value) {
    let paths = spec(service)["paths"].as_object().expect("paths");
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("path item") {
            if op.get("operationId").and_then(Value::as_str) == Some(id) {
                return (method.to_uppercase(), path.clone(), op);
            }
        }
    }
    panic!("{service}: no operation {id}")
}

fn resolve<'a>(service: &str, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        None => value,
        Some(reference) => {
            let mut target = spec(service);
            for part in reference.trim_start_matches("#/").split('/') {
                target = &target[part];
            }
            assert!(!target.is_null(), "{service}: dangling {reference}");
            target
        }
    }
}

/// The example of a component schema.
pub fn schema_example(service: &str, schema: &str) -> Value {
    let example = spec(service)["components"]["schemas"][schema]["example"].clone();
    assert!(
        !example.is_null(),
        "{service}: schema {schema} has no example"
    );
    example
}

/// The documented success reply of an operation: the example of its HTTP 200 reply schema.
pub fn reply_example(service: &str, id: &str) -> Value {
    let (_, _, op) = operation(service, id);
    let response = resolve(service, &op["responses"]["200"]);
    let schema = &response["content"]["application/json"]["schema"]["$ref"];
    let name = schema
        .as_str()
        .and_then(|s| s.strip_prefix("#/components/schemas/"))
        .unwrap_or_else(|| panic!("{id}: HTTP 200 reply is not a named schema"));
    schema_example(service, name)
}

/// The documented business-exception reply of an operation (its HTTP 299 example).
pub fn error_example(service: &str, id: &str) -> Value {
    let (_, _, op) = operation(service, id);
    let response = resolve(service, &op["responses"]["299"]);
    let example = response["content"]["application/json"]["example"].clone();
    assert!(!example.is_null(), "{id}: HTTP 299 reply has no example");
    example
}

/// Asserts the spec documents `id` as `METHOD path` (the test hard-codes the documents'
/// path; this keeps the spec honest too).
pub fn assert_documented(service: &str, id: &str, expected_method: &str, expected_path: &str) {
    let (m, p, _) = operation(service, id);
    assert_eq!(
        (m.as_str(), p.as_str()),
        (expected_method, expected_path),
        "{id}"
    );
}

/// Drops `null` members and empty arrays, recursively: the spellings of "absent" a
/// serializer may choose between.
pub fn prune(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
                .map(|(k, v)| (k, prune(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(prune).collect()),
        other => other,
    }
}

/// Asserts a decoded value carries exactly the documented example's fields and values
/// (re-serialized with the documents' names; `null`/empty arrays count as absent).
pub fn assert_decodes_example<T: serde::Serialize>(decoded: &T, example: &Value) {
    let actual = prune(serde_json::to_value(decoded).expect("serializable"));
    assert_eq!(actual, prune(example.clone()));
}

// ------------------------------------------------------------------------------ clients

/// Small, fast backoff for tests.
pub fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy::Backoff(Backoff {
        max_attempts,
        initial_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(10),
        max_elapsed: Duration::from_secs(5),
    })
}

pub fn order_client(uri: &str) -> order::Client {
    order_client_with(uri, RetryPolicy::Never)
}

pub fn order_client_with(uri: &str, retry: RetryPolicy) -> order::Client {
    order::Client::builder(uri)
        .application_token(APP_TOKEN)
        .timeout(Duration::from_secs(5))
        .retry(retry)
        .build()
        .expect("order client")
}

pub fn member_client(uri: &str) -> member::Client {
    member_client_with(uri, RetryPolicy::Never)
}

pub fn member_client_with(uri: &str, retry: RetryPolicy) -> member::Client {
    member::Client::builder(uri)
        .client_token(CLIENT_TOKEN)
        .user_token(USER_TOKEN)
        .timeout(Duration::from_secs(5))
        .retry(retry)
        .build()
        .expect("member client")
}

/// A token provider that counts how often it is asked (once per attempt).
pub fn counting_provider(
    token: &'static str,
) -> (
    Arc<AtomicUsize>,
    impl Fn() -> TokenFuture<'static> + Send + Sync + 'static,
) {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let provider = move || -> TokenFuture<'static> {
        counter.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { Ok(SecretString::from(token.to_string())) })
    };
    (count, provider)
}

/// A base URL on which nothing listens: a port bound and released at once.
pub fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

// ------------------------------------------------------------------------------ server

/// Answers `METHOD path` with `status` and a JSON body.
pub async fn reply(server: &MockServer, m: &str, p: &str, status: u16, body: Value) {
    Mock::given(method(m))
        .and(path(p))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(server)
        .await;
}

/// Every request the server received.
pub async fn received(server: &MockServer) -> Vec<Request> {
    server
        .received_requests()
        .await
        .expect("request recording is on")
}

/// The one request the server received.
pub async fn only_request(server: &MockServer) -> Request {
    let mut requests = received(server).await;
    assert_eq!(requests.len(), 1, "exactly one request expected");
    requests.remove(0)
}

// ------------------------------------------------------------------------------ wire checks

/// The request's `g_nonce`, checked: present exactly once, at least 32 characters,
/// URL-safe (`A-Z a-z 0-9 - _`).
pub fn nonce(request: &Request) -> String {
    let nonces: Vec<String> = request
        .url
        .query_pairs()
        .filter(|(k, _)| k == "g_nonce")
        .map(|(_, v)| v.into_owned())
        .collect();
    assert_eq!(nonces.len(), 1, "one g_nonce in {}", request.url);
    let n = nonces.into_iter().next().unwrap();
    assert!(n.len() >= 32, "g_nonce {n:?} shorter than 32 characters");
    assert!(
        n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "g_nonce {n:?} is not URL-safe"
    );
    // Nothing in the raw query needs escaping either.
    assert!(
        request
            .url
            .query()
            .unwrap_or_default()
            .contains(&format!("g_nonce={n}")),
        "g_nonce is sent verbatim"
    );
    n
}

/// Asserts every request carries a valid `g_nonce` and no two share one.
pub fn assert_unique_nonces(requests: &[Request]) {
    let nonces: Vec<String> = requests.iter().map(nonce).collect();
    let distinct: HashSet<&String> = nonces.iter().collect();
    assert_eq!(distinct.len(), nonces.len(), "repeated g_nonce: {nonces:?}");
}

/// The query parameters other than `g_nonce`, in order, as sent.
pub fn query_without_nonce(request: &Request) -> Vec<(String, String)> {
    request
        .url
        .query_pairs()
        .filter(|(k, _)| k != "g_nonce")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Asserts the exact query (besides `g_nonce`), ignoring order.
pub fn assert_query(request: &Request, expected: &[(&str, &str)]) {
    nonce(request);
    let mut actual = query_without_nonce(request);
    actual.sort();
    let mut expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    expected.sort();
    assert_eq!(actual, expected, "query of {}", request.url);
}

fn header<'a>(request: &'a Request, name: &str) -> Vec<&'a str> {
    request
        .headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().expect("ASCII header"))
        .collect()
}

/// `Authorization: Bearer <application token>`, and nothing of the member center's.
pub fn assert_order_auth(request: &Request) {
    assert_eq!(
        header(request, "authorization"),
        [format!("Bearer {APP_TOKEN}")]
    );
    assert!(header(request, "clienttoken").is_empty());
    assert!(header(request, "usertoken").is_empty());
    // The order document requires it on every endpoint, bodiless reads included.
    assert_eq!(header(request, "content-type"), ["application/json"]);
}

/// `Authorization: Bearer <client>`, `clientToken: <client>`, `userToken: <user>`.
pub fn assert_member_auth(request: &Request) {
    assert_eq!(
        header(request, "authorization"),
        [format!("Bearer {CLIENT_TOKEN}")]
    );
    assert_eq!(header(request, "clientToken"), [CLIENT_TOKEN]);
    assert_eq!(header(request, "userToken"), [USER_TOKEN]);
}

/// `Content-Type: application/json` and exactly this JSON body.
pub fn assert_json_body(request: &Request, expected: Value) {
    assert_eq!(header(request, "content-type"), ["application/json"]);
    let actual: Value = serde_json::from_slice(&request.body).unwrap_or_else(|e| {
        panic!(
            "body is not JSON ({e}): {}",
            String::from_utf8_lossy(&request.body)
        )
    });
    assert_eq!(actual, expected);
}

/// No body at all.
pub fn assert_no_body(request: &Request) {
    assert!(
        request.body.is_empty(),
        "unexpected body {:?}",
        String::from_utf8_lossy(&request.body)
    );
}

/// Method and path, exactly as the documents spell them.
pub fn assert_target(request: &Request, m: &str, p: &str) {
    assert_eq!(request.method.as_str(), m);
    assert_eq!(request.url.path(), p);
}

// ------------------------------------------------------------------------------ every operation

/// The 19 operations: (service, operationId).
pub const OPERATIONS: [(&str, &str); 19] = [
    ("order", "bindEnterprise"),
    ("order", "createEnterprise"),
    ("order", "queryEnterprise"),
    ("order", "updateEnterprise"),
    ("order", "batchOrder"),
    ("order", "disableLocks"),
    ("order", "enableLocks"),
    ("order", "listVirtualAssets"),
    ("order", "allocateShellNums"),
    ("member", "addMembers"),
    ("member", "editMember"),
    ("member", "resetMemberPassword"),
    ("member", "deleteMember"),
    ("member", "listMembers"),
    ("member", "listAssetNums"),
    ("member", "listAssetProducts"),
    ("member", "listLentLocks"),
    ("member", "configureMemberAssets"),
    ("member", "lendAssets"),
];

/// A request body: the spec's example of the schema, typed.
pub fn body_example<T: serde::de::DeserializeOwned>(service: &str, schema: &str) -> T {
    serde_json::from_value(schema_example(service, schema))
        .unwrap_or_else(|e| panic!("{schema} example does not decode: {e}"))
}

/// Sends operation `id` with valid inputs (the spec's request examples), dropping `data`.
pub async fn call_operation(
    order: &order::Client,
    member: &member::Client,
    id: &str,
) -> Result<(), licensing_sdk::Error> {
    use licensing_sdk::DefaultCustomer;
    const O: &str = "order";
    const M: &str = "member";
    match id {
        "bindEnterprise" => order
            .bind_enterprise()
            .body(body_example::<order::types::BindEnterpriseRequest>(
                O,
                "BindEnterpriseRequest",
            ))
            .await
            .map(drop),
        "createEnterprise" => order
            .create_enterprise()
            .body(body_example::<order::types::CreateEnterpriseRequest>(
                O,
                "CreateEnterpriseRequest",
            ))
            .await
            .map(drop),
        "queryEnterprise" => order
            .query_enterprise()
            .channel_code("CH01")
            .channel_customer_id("CC-42")
            .default_customer(DefaultCustomer::All)
            .await
            .map(drop),
        "updateEnterprise" => {
            order
                .update_enterprise()
                .body(body_example::<order::types::UpdateEnterpriseRequest>(
                    O,
                    "UpdateEnterpriseRequest",
                ))
                .await
        }
        "batchOrder" => order
            .batch_order()
            .app_key("app-key-1")
            .body(body_example::<order::types::BatchOrderRequest>(
                O,
                "BatchOrderRequest",
            ))
            .await
            .map(drop),
        "disableLocks" => order
            .disable_locks()
            .body(body_example::<order::types::LockRequest>(O, "LockRequest"))
            .await
            .map(drop),
        "enableLocks" => order
            .enable_locks()
            .body(body_example::<order::types::LockRequest>(O, "LockRequest"))
            .await
            .map(drop),
        "listVirtualAssets" => order
            .list_virtual_assets()
            .enterprise_global_id("EG-7f3a")
            .await
            .map(drop),
        "allocateShellNums" => order
            .allocate_shell_nums()
            .body(body_example::<order::types::AllocateShellNumsRequest>(
                O,
                "AllocateShellNumsRequest",
            ))
            .await
            .map(drop),
        "addMembers" => member
            .add_members()
            .enterprise_global_id("EG-7f3a")
            .body(body_example::<member::types::AddMembersRequest>(
                M,
                "AddMembersRequest",
            ))
            .await
            .map(drop),
        "editMember" => {
            member
                .edit_member()
                .enterprise_global_id("EG-7f3a")
                .member_global_id("MG-2")
                .body(body_example::<member::types::EditMemberRequest>(
                    M,
                    "EditMemberRequest",
                ))
                .await
        }
        "resetMemberPassword" => {
            member
                .reset_member_password()
                .enterprise_global_id("EG-7f3a")
                .member_global_id("MG-2")
                .body(body_example::<member::types::ResetPasswordRequest>(
                    M,
                    "ResetPasswordRequest",
                ))
                .await
        }
        "deleteMember" => {
            member
                .delete_member()
                .enterprise_global_id("EG-7f3a")
                .member_global_id("MG-2")
                .await
        }
        "listMembers" => member
            .list_members()
            .enterprise_global_id("EG-7f3a")
            .page_num(1u32)
            .page_size(10u32)
            .await
            .map(drop),
        "listAssetNums" => member
            .list_asset_nums()
            .enterprise_global_id("EG-7f3a")
            .await
            .map(drop),
        "listAssetProducts" => member.list_asset_products().asset_id("A-1").await.map(drop),
        "listLentLocks" => member
            .list_lent_locks()
            .enterprise_global_id("EG-7f3a")
            .await
            .map(drop),
        "configureMemberAssets" => {
            member
                .configure_member_assets()
                .member_global_id("MG-2")
                .body(body_example::<member::types::ConfigureAssetsRequest>(
                    M,
                    "ConfigureAssetsRequest",
                ))
                .await
        }
        "lendAssets" => {
            member
                .lend_assets()
                .member_global_id("MG-2")
                .body(body_example::<member::types::LendAssetsRequest>(
                    M,
                    "LendAssetsRequest",
                ))
                .await
        }
        other => panic!("unknown operation {other}"),
    }
}
