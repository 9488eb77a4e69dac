//! Helpers shared by the areas' tests.
//!
//! Operation facts come from the generated table (`licensing_sdk::operations`); reply and
//! request examples are read from `spec/*.yaml` at test time, so the tests and the spec
//! cannot drift apart.

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
    member,
    operations::{self, Operation, Service},
    order,
};
use serde_json::Value;
use wiremock::{
    Mock, MockBuilder, MockServer, Request, ResponseTemplate,
    matchers::{method, path},
};

pub const APP_TOKEN: &str = "app-token-Q9xR2";
pub const CLIENT_TOKEN: &str = "client-token-K7pL4";
pub const USER_TOKEN: &str = "user-token-Z3mN8";

// ------------------------------------------------------------------------------ table

/// The operation with this `operationId`, from the generated table.
pub fn op(id: &str) -> &'static Operation {
    operations::find(id).unwrap_or_else(|| panic!("no operation {id} in the table"))
}

/// The spec file (`order` or `member`) an operation comes from.
pub fn service_of(op: &Operation) -> &'static str {
    match op.service {
        Service::Order => "order",
        Service::Member => "member",
    }
}

/// A Rust type's name spelled as the table spells types: `std::any::type_name` without
/// the crate's and the standard library's module prefixes.
pub fn table_spelling(type_name: &str) -> String {
    type_name
        .replace("licensing_sdk::", "")
        .replace("alloc::vec::", "")
        .replace("alloc::string::", "")
}

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

/// The spec's operation object of a table record, found at the record's path and method.
pub fn spec_operation(op: &Operation) -> &'static Value {
    let service = service_of(op);
    let found = &spec(service)["paths"][op.path][op.method.as_str().to_lowercase()];
    assert_eq!(
        found["operationId"].as_str(),
        Some(op.id),
        "{service}: {} {} is not {}",
        op.method.as_str(),
        op.path,
        op.id
    );
    found
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
pub fn reply_example(id: &str) -> Value {
    let op = op(id);
    let service = service_of(op);
    let response = resolve(service, &spec_operation(op)["responses"]["200"]);
    let schema = &response["content"]["application/json"]["schema"]["$ref"];
    let name = schema
        .as_str()
        .and_then(|s| s.strip_prefix("#/components/schemas/"))
        .unwrap_or_else(|| panic!("{id}: HTTP 200 reply is not a named schema"));
    schema_example(service, name)
}

/// The documented business-exception reply of an operation (its HTTP 299 example).
pub fn error_example(id: &str) -> Value {
    let op = op(id);
    let response = resolve(service_of(op), &spec_operation(op)["responses"]["299"]);
    let example = response["content"]["application/json"]["example"].clone();
    assert!(!example.is_null(), "{id}: HTTP 299 reply has no example");
    example
}

/// A request body: the spec's example of `T`'s schema (the schema `T` is generated from,
/// found by `T`'s name), typed.
pub fn body_example<T: serde::de::DeserializeOwned>() -> T {
    let name = table_spelling(std::any::type_name::<T>());
    let (service, schema) = match name.split("::").collect::<Vec<_>>()[..] {
        [service, "types", schema] => (service, schema),
        _ => panic!("{name} is not a generated type"),
    };
    serde_json::from_value(schema_example(service, schema))
        .unwrap_or_else(|e| panic!("{name} example does not decode: {e}"))
}

/// A generated type's value from its builder, which must be valid.
pub fn typed<T, B>(builder: B) -> T
where
    B: TryInto<T>,
    B::Error: std::fmt::Debug,
{
    builder.try_into().expect("a valid typed value")
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
    order_builder(uri)
        .retry(retry)
        .build()
        .expect("order client")
}

/// An order client builder with the test token and a 5 s attempt timeout.
pub fn order_builder(uri: &str) -> licensing_sdk::ClientBuilder<licensing_sdk::OrderService> {
    order::Client::builder(uri)
        .application_token(APP_TOKEN)
        .timeout(Duration::from_secs(5))
}

pub fn member_client(uri: &str) -> member::Client {
    member_client_with(uri, RetryPolicy::Never)
}

pub fn member_client_with(uri: &str, retry: RetryPolicy) -> member::Client {
    member_base(uri, retry)
        .user_token(USER_TOKEN)
        .build()
        .expect("member client")
}

/// A member client builder with the test client token, a 5 s attempt timeout and `retry`;
/// the user token is the test's to give.
pub fn member_base(
    uri: &str,
    retry: RetryPolicy,
) -> licensing_sdk::ClientBuilder<licensing_sdk::MemberService> {
    member::Client::builder(uri)
        .client_token(CLIENT_TOKEN)
        .timeout(Duration::from_secs(5))
        .retry(retry)
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

/// A mock for operation `id`: its method, and its path with `values` filled in.
pub fn mock(id: &str, values: &[&str]) -> MockBuilder {
    let op = op(id);
    Mock::given(method(op.method.as_str())).and(path(op.path_with(values)))
}

/// Answers `id` (an operation without path parameters) with its documented success reply.
pub async fn reply_documented(server: &MockServer, id: &str) {
    reply_ok(server, id, &[]).await;
}

/// Answers operation `id` (its path filled with `values`) with its documented success
/// reply.
pub async fn reply_ok(server: &MockServer, id: &str, values: &[&str]) {
    reply(server, id, values, 200, reply_example(id)).await;
}

/// Answers operation `id` (its path filled with `values`) with `status` and a JSON body.
pub async fn reply(server: &MockServer, id: &str, values: &[&str], status: u16, body: Value) {
    mock(id, values)
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(server)
        .await;
}

/// Answers every request with `template`: the first `times` ones, when given (the mocks
/// mounted after it answer the rest), or all of them.
pub async fn answer_any(server: &MockServer, template: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(wiremock::matchers::any()).respond_with(template);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

/// A server no request may reach: `server.verify()` fails if one did.
pub async fn unreachable() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    server
}

/// Every request the server received, failing unless there were `n`.
pub async fn received_n(server: &MockServer, n: usize) -> Vec<Request> {
    let requests = received(server).await;
    assert_eq!(requests.len(), n, "requests received");
    requests
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

/// Method and path of operation `id`, as the table (the spec) gives them, the path's
/// parameters filled with `values` (as sent, escaped).
pub fn assert_target(request: &Request, id: &str, values: &[&str]) {
    let op = op(id);
    assert_eq!(request.method.as_str(), op.method.as_str(), "{id}");
    assert_eq!(request.url.path(), op.path_with(values), "{id}");
}

// ------------------------------------------------------------------------------ every operation

/// One valid call of each operation, by service and client method: the inputs the table
/// cannot give (path and query values; the request body, the spec's example of it).
/// `queryEnterprise` of the channel customer CH01/CC-42, every customer of its enterprise.
pub fn query(client: &order::Client) -> order::builder::QueryEnterprise<'_> {
    valid::order::query_enterprise(client)
}

mod valid {
    use super::body_example;
    use licensing_sdk::DefaultCustomer;

    pub mod order {
        use super::*;
        use licensing_sdk::order::{Client, builder, types};

        pub fn bind_enterprise(c: &Client) -> builder::BindEnterprise<'_> {
            c.bind_enterprise()
                .body(body_example::<types::BindEnterpriseRequest>())
        }

        pub fn create_enterprise(c: &Client) -> builder::CreateEnterprise<'_> {
            c.create_enterprise()
                .body(body_example::<types::CreateEnterpriseRequest>())
        }

        pub fn query_enterprise(c: &Client) -> builder::QueryEnterprise<'_> {
            c.query_enterprise()
                .channel_code("CH01")
                .channel_customer_id("CC-42")
                .default_customer(DefaultCustomer::All)
        }

        pub fn update_enterprise(c: &Client) -> builder::UpdateEnterprise<'_> {
            c.update_enterprise()
                .body(body_example::<types::UpdateEnterpriseRequest>())
        }

        pub fn batch_order(c: &Client) -> builder::BatchOrder<'_> {
            c.batch_order()
                .app_key("app-key-1")
                .body(body_example::<types::BatchOrderRequest>())
        }

        pub fn disable_locks(c: &Client) -> builder::DisableLocks<'_> {
            c.disable_locks().body(body_example::<types::LockRequest>())
        }

        pub fn enable_locks(c: &Client) -> builder::EnableLocks<'_> {
            c.enable_locks().body(body_example::<types::LockRequest>())
        }

        pub fn list_virtual_assets(c: &Client) -> builder::ListVirtualAssets<'_> {
            c.list_virtual_assets().enterprise_global_id("EG-7f3a")
        }

        pub fn allocate_shell_nums(c: &Client) -> builder::AllocateShellNums<'_> {
            c.allocate_shell_nums()
                .body(body_example::<types::AllocateShellNumsRequest>())
        }
    }

    pub mod member {
        use super::*;
        use licensing_sdk::member::{Client, builder, types};

        pub fn add_members(c: &Client) -> builder::AddMembers<'_> {
            c.add_members()
                .enterprise_global_id("EG-7f3a")
                .body(body_example::<types::AddMembersRequest>())
        }

        pub fn edit_member(c: &Client) -> builder::EditMember<'_> {
            c.edit_member()
                .enterprise_global_id("EG-7f3a")
                .member_global_id("MG-2")
                .body(body_example::<types::EditMemberRequest>())
        }

        pub fn reset_member_password(c: &Client) -> builder::ResetMemberPassword<'_> {
            c.reset_member_password()
                .enterprise_global_id("EG-7f3a")
                .member_global_id("MG-2")
                .body(body_example::<types::ResetPasswordRequest>())
        }

        pub fn delete_member(c: &Client) -> builder::DeleteMember<'_> {
            c.delete_member()
                .enterprise_global_id("EG-7f3a")
                .member_global_id("MG-2")
        }

        pub fn list_members(c: &Client) -> builder::ListMembers<'_> {
            c.list_members()
                .enterprise_global_id("EG-7f3a")
                .page_num(1u32)
                .page_size(10u32)
        }

        pub fn list_asset_nums(c: &Client) -> builder::ListAssetNums<'_> {
            c.list_asset_nums().enterprise_global_id("EG-7f3a")
        }

        pub fn list_asset_products(c: &Client) -> builder::ListAssetProducts<'_> {
            c.list_asset_products().asset_id("A-1")
        }

        pub fn list_lent_locks(c: &Client) -> builder::ListLentLocks<'_> {
            c.list_lent_locks().enterprise_global_id("EG-7f3a")
        }

        pub fn configure_member_assets(c: &Client) -> builder::ConfigureMemberAssets<'_> {
            c.configure_member_assets()
                .member_global_id("MG-2")
                .body(body_example::<types::ConfigureAssetsRequest>())
        }

        pub fn lend_assets(c: &Client) -> builder::LendAssets<'_> {
            c.lend_assets()
                .member_global_id("MG-2")
                .body(body_example::<types::LendAssetsRequest>())
        }
    }
}

/// Both clients, each reachable by its service's name.
struct Clients<'a> {
    order: &'a order::Client,
    member: &'a member::Client,
}

/// `call_operation`, with one arm per entry of the table: an operation added to a spec
/// without a [`valid`] call does not compile.
macro_rules! dispatch {
    ($( ($service:ident, $builder:ident, $function:ident, $method:ident, $path:literal,
         $reply:ty, $record:path); )*) => {
        /// Sends operation `id` with valid inputs, dropping `data`.
        pub async fn call_operation(
            order: &order::Client,
            member: &member::Client,
            id: &str,
        ) -> Result<(), licensing_sdk::Error> {
            let clients = Clients { order, member };
            $(
                if id == $record.id {
                    return valid::$service::$function(clients.$service).await.map(drop);
                }
            )*
            panic!("unknown operation {id}")
        }
    };
}

licensing_sdk::for_each_operation!(dispatch);
