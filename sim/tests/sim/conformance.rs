//! The conformance sweep: every operation of the table, sent malformed requests, answers
//! each with HTTP 299 and a code the documents give for that operation. The variants come
//! from the table and the spec alone (request schemas and query parameters are read from
//! `spec/*.yaml`): no `g_nonce`, an empty one, two of them; for a body, not JSON, `{}`, an
//! array, `null`, `null` and a wrong type for each top-level field, integers out of their
//! range, no `Content-Type`; for query parameters, values out of their schema's range.
//!
//! The simulator itself panics (debug builds) on an undocumented code, which drops the
//! connection: the sweep then fails on the send, naming the case.

use std::collections::BTreeSet;

use licensing_sdk::operations::{self, Operation, Service};
use licensing_sim::{DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN};
use serde_json::{Map, Value, json};

use crate::support::{Env, Raw, new_member, start};

/// The spec document of a service, as JSON.
fn spec(service: Service) -> Value {
    let file = match service {
        Service::Order => "order.yaml",
        Service::Member => "member.yaml",
    };
    let path = format!("{}/../spec/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A node with its `$ref` (local, `#/...`) followed.
fn resolve<'s>(spec: &'s Value, node: &'s Value) -> &'s Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.strip_prefix('#').expect("a local $ref");
            resolve(
                spec,
                spec.pointer(pointer)
                    .unwrap_or_else(|| panic!("{reference} resolves")),
            )
        }
        None => node,
    }
}

/// A query parameter of an operation, from the spec.
#[derive(Debug)]
struct Param {
    name: String,
    required: bool,
    schema: Value,
}

/// A top-level field of a request body, from the spec.
#[derive(Debug)]
struct Field {
    name: String,
    required: bool,
    schema: Value,
}

/// What the spec says about an operation's request.
struct Request {
    query: Vec<Param>,
    body: Option<Vec<Field>>,
}

fn request(spec: &Value, op: &Operation) -> Request {
    let paths = &spec["paths"];
    let node = &paths[op.path][op.method.as_str().to_ascii_lowercase()];
    assert!(node.is_object(), "{}: not in the spec's paths", op.id);
    let query = node["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| resolve(spec, p))
        .filter(|p| p["in"] == "query" && p["name"] != "g_nonce")
        .map(|p| Param {
            name: p["name"].as_str().unwrap().to_string(),
            required: p["required"].as_bool().unwrap_or(false),
            schema: resolve(spec, &p["schema"]).clone(),
        })
        .collect();
    let body = node
        .get("requestBody")
        .map(|b| {
            resolve(
                spec,
                &resolve(spec, b)["content"]["application/json"]["schema"],
            )
        })
        .map(|schema| {
            let required: BTreeSet<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            schema["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("{}: a request schema with properties", op.id))
                .iter()
                .map(|(name, s)| Field {
                    name: name.clone(),
                    required: required.contains(name.as_str()),
                    schema: resolve(spec, s).clone(),
                })
                .collect()
        });
    Request { query, body }
}

/// A value the schema accepts, for the parameters a variant leaves alone.
fn valid_value(schema: &Value) -> String {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first
            .as_str()
            .map_or_else(|| first.to_string(), str::to_owned);
    }
    match schema["type"].as_str() {
        Some("integer" | "number") => schema["minimum"]
            .as_i64()
            .map_or("1".to_string(), |m| m.max(1).to_string()),
        _ => "sim-value".to_string(),
    }
}

/// Whether a query value breaks its schema (type, integer format, minimum, enumeration).
fn breaks(schema: &Value, value: &str) -> bool {
    if let Some(values) = schema["enum"].as_array() {
        return !values.iter().any(|v| v.as_str() == Some(value));
    }
    match schema["type"].as_str() {
        Some("integer") => {
            let parsed = match schema["format"].as_str() {
                Some("int32") => value.parse::<i32>().ok().map(i64::from),
                _ => value.parse::<i64>().ok(),
            };
            match (parsed, schema["minimum"].as_i64()) {
                (None, _) => true,
                (Some(n), Some(min)) => n < min,
                (Some(_), None) => false,
            }
        }
        _ => false,
    }
}

/// A JSON value of the wrong type for the schema.
fn wrong_type(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("string") => json!(12345),
        Some(other) => json!(format!("not-an-{other}")),
        None => json!(12345),
    }
}

/// Integers outside the field's range: below its minimum, past 32 bits for `int32`.
fn out_of_range(schema: &Value) -> Vec<Value> {
    if schema["type"] != "integer" {
        return Vec::new();
    }
    let mut values = Vec::new();
    if let Some(min) = schema["minimum"].as_i64() {
        values.push(json!(min - 1));
    }
    if schema["format"] == "int32" {
        values.push(json!(2_147_483_648_i64));
    }
    values
}

/// A body as sent: the bytes and whether `Content-Type: application/json` goes with them.
#[derive(Clone)]
struct Body {
    bytes: String,
    json: bool,
}

impl Body {
    fn json(value: &Value) -> Self {
        Self {
            bytes: value.to_string(),
            json: true,
        }
    }
}

/// One malformed request and what its reply must name.
struct Case {
    what: String,
    query: Vec<(String, String)>,
    body: Option<Body>,
    /// The reply must be a business exception (HTTP 299); otherwise a success is fine.
    must_fail: bool,
    /// Names of which the message must carry one, when the reply is a failure.
    names: Vec<String>,
}

/// The sweep's client: credentials for each service, requests exactly as a case gives.
struct Sender {
    http: reqwest::Client,
    base: String,
}

impl Sender {
    async fn send(&self, op: &Operation, path: &str, case: &Case) -> Raw {
        let query: Vec<String> = case
            .query
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        let url = format!("{}{path}?{}", self.base, query.join("&"));
        let mut request = self.http.request(op.method.as_str().parse().unwrap(), url);
        request = match op.service {
            Service::Order => {
                request.header("authorization", format!("Bearer {DEFAULT_APP_TOKEN}"))
            }
            Service::Member => request
                .header("authorization", format!("Bearer {DEFAULT_CLIENT_TOKEN}"))
                .header("clienttoken", DEFAULT_CLIENT_TOKEN)
                .header("usertoken", DEFAULT_USER_TOKEN),
        };
        if let Some(body) = &case.body {
            if body.json {
                request = request.header("content-type", "application/json");
            }
            request = request.body(body.bytes.clone());
        } else if op.service == Service::Order {
            // Required on every order-service request, body or not, as the SDK sends it.
            request = request.header("content-type", "application/json");
        }
        let response = request.send().await.unwrap_or_else(|e| {
            panic!(
                "{} {}: no answer (did the simulator panic on an undocumented code?): {e}",
                op.id, case.what
            )
        });
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Raw { status, body }
    }
}

/// Percent-encodes a query value (the variants use only a few special characters).
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn nonce() -> (String, String) {
    ("g_nonce".to_string(), licensing_sdk::runtime::nonce())
}

/// Every malformed variant of one operation.
fn cases(request: &Request) -> Vec<Case> {
    let valid_query: Vec<(String, String)> = request
        .query
        .iter()
        .filter(|p| p.required)
        .map(|p| (p.name.clone(), valid_value(&p.schema)))
        .collect();
    let with_nonce = |mut query: Vec<(String, String)>| {
        query.push(nonce());
        query
    };
    let plain_body = request.body.as_ref().map(|_| Body::json(&json!({})));
    let g_nonce = vec!["g_nonce".to_string()];
    let mut cases = Vec::new();

    // The nonce, on every operation.
    let nonce_cases = [
        ("no g_nonce", valid_query.clone()),
        ("an empty g_nonce", {
            let mut q = valid_query.clone();
            q.push(("g_nonce".into(), String::new()));
            q
        }),
        ("two g_nonces", with_nonce(with_nonce(valid_query.clone()))),
    ];
    for (what, query) in nonce_cases {
        cases.push(Case {
            what: what.to_string(),
            query,
            body: plain_body.clone(),
            must_fail: true,
            names: g_nonce.clone(),
        });
    }

    // The body.
    if let Some(fields) = &request.body {
        let all: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
        let required: Vec<String> = fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name.clone())
            .collect();
        let mut body_case = |what: String, body: Body, names: Vec<String>| {
            cases.push(Case {
                what,
                query: with_nonce(valid_query.clone()),
                body: Some(body),
                must_fail: true,
                names,
            });
        };
        let raw = |bytes: &str| Body {
            bytes: bytes.to_string(),
            json: true,
        };
        body_case("a body that is not JSON".into(), raw("{not json"), vec![]);
        body_case("an empty body".into(), raw(""), vec![]);
        body_case("the body {}".into(), raw("{}"), required.clone());
        body_case("a JSON array".into(), raw("[{}]"), vec![]);
        body_case("the body null".into(), raw("null"), vec![]);
        body_case(
            "no Content-Type".into(),
            Body {
                bytes: "{}".into(),
                json: false,
            },
            vec!["Content-Type".into()],
        );
        let nulls: Map<String, Value> = all.iter().map(|f| (f.clone(), Value::Null)).collect();
        body_case(
            "null for every field".into(),
            Body::json(&Value::Object(nulls)),
            all.clone(),
        );
        for field in fields {
            // A required field's own problem is named; an optional one's null is accepted,
            // and then a missing required field is.
            let own = if field.required {
                vec![field.name.clone()]
            } else {
                required.clone()
            };
            body_case(
                format!("{}: null", field.name),
                Body::json(&json!({ field.name.clone(): null })),
                own,
            );
            let wrong = wrong_type(&field.schema);
            body_case(
                format!("{}: {wrong} (wrong type)", field.name),
                Body::json(&json!({ field.name.clone(): wrong })),
                vec![field.name.clone()],
            );
            for value in out_of_range(&field.schema) {
                body_case(
                    format!("{}: {value} (out of range)", field.name),
                    Body::json(&json!({ field.name.clone(): value })),
                    vec![field.name.clone()],
                );
            }
        }
    }

    // The query parameters.
    for param in &request.query {
        let others = || -> Vec<(String, String)> {
            valid_query
                .iter()
                .filter(|(k, _)| *k != param.name)
                .cloned()
                .collect()
        };
        if param.required {
            cases.push(Case {
                what: format!("no {}", param.name),
                query: with_nonce(others()),
                body: plain_body.clone(),
                must_fail: true,
                names: vec![param.name.clone()],
            });
        }
        let values = [
            "",
            "0",
            "-1",
            "2147483648",
            "9223372036854775808",
            "1.5",
            "abc",
            "Y N",
        ];
        for value in values {
            let mut query = others();
            query.push((param.name.clone(), value.to_string()));
            let broken = breaks(&param.schema, value);
            cases.push(Case {
                what: format!("{}={value:?}", param.name),
                query: with_nonce(query),
                body: plain_body.clone(),
                must_fail: broken,
                names: if broken {
                    vec![param.name.clone()]
                } else {
                    Vec::new()
                },
            });
        }
    }
    cases
}

/// The operation's path with a placeholder for each parameter.
fn placeholder_path(op: &Operation) -> String {
    let values: Vec<String> = op.path_params().map(|name| format!("sim-{name}")).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    op.path_with(&values)
}

#[tokio::test]
async fn every_malformed_request_answers_a_documented_code() {
    let env = start().await;
    let sender = Sender {
        http: reqwest::Client::new(),
        base: env.url(),
    };
    let specs = [
        (Service::Order, spec(Service::Order)),
        (Service::Member, spec(Service::Member)),
    ];
    let mut count = 0;
    let mut per_operation = Vec::new();
    for op in operations::ALL {
        let spec = &specs.iter().find(|(s, _)| *s == op.service).unwrap().1;
        let request = request(spec, op);
        assert_eq!(
            request.body.is_some(),
            op.request_type.is_some(),
            "{}: the spec and the table disagree on the body",
            op.id
        );
        let path = placeholder_path(op);
        let cases = cases(&request);
        per_operation.push(format!("{} {}", op.id, cases.len()));
        for case in &cases {
            let raw = sender.send(op, &path, case).await;
            let what = format!("{} {}: {raw:?}", op.id, case.what);
            count += 1;
            if raw.status == 200 {
                assert!(!case.must_fail, "{what}: accepted");
                assert_eq!(raw.body["code"], json!(0), "{what}");
                continue;
            }
            assert_eq!(raw.status, 299, "{what}");
            let Value::String(code) = &raw.body["code"] else {
                panic!("{what}: the code is not a string");
            };
            assert!(
                op.documents(code),
                "{what}: {code} is not documented for {}",
                op.id
            );
            let message = raw.body["message"].as_str().unwrap_or_default();
            if op.service == Service::Order {
                assert_eq!(code, "13004", "{what}: the order service's one code");
            }
            // The order service's message carries the detail, so it names the field;
            // the member center names the nonce or the query parameter in its message or
            // its cause (its body codes are specific enough on their own).
            let text = match op.service {
                Service::Order => message.to_string(),
                Service::Member => {
                    format!("{message} {}", raw.body["cause"].as_str().unwrap_or(""))
                }
            };
            let named = op.service == Service::Order
                || case.names == ["g_nonce"]
                || request.query.iter().any(|p| case.names.contains(&p.name));
            if named && !case.names.is_empty() {
                assert!(
                    case.names.iter().any(|n| text.contains(n.as_str())),
                    "{what}: the message names none of {:?}",
                    case.names
                );
            }
        }
    }
    eprintln!(
        "conformance sweep: {count} malformed requests over {} operations ({})",
        operations::ALL.len(),
        per_operation.join(", ")
    );
    assert!(count > 10 * operations::ALL.len(), "only {count} cases");
}

/// A query value that is present but wrong says what is wrong, not "parameter empty".
#[tokio::test]
async fn list_members_says_what_is_wrong_with_a_page_parameter() {
    let env = start().await;
    let list = |query: String| {
        let env = &env;
        async move {
            let path = operations::find("listMembers")
                .unwrap()
                .path_with(&["sim-enterprise"]);
            env.raw("GET", &format!("{path}?{query}"), None).await
        }
    };
    for value in ["0", "-1", "2147483648", "x"] {
        let raw = list(format!("pageNum=1&pageSize={value}")).await;
        assert_eq!(
            (raw.status, raw.code()),
            (299, "40000".to_string()),
            "{raw:?}"
        );
        assert_eq!(
            raw.body["message"], "pageSize must be a positive 32-bit integer",
            "{raw:?}"
        );
    }
    let missing = list("pageNum=1".to_string()).await;
    assert_eq!(missing.code(), "40000");
    assert!(missing.body["cause"].as_str().unwrap().contains("pageSize"));
}

/// Two `g_nonce`s are refused whatever their values, and neither is recorded: a fresh
/// one cannot carry a used one through.
#[tokio::test]
async fn a_repeated_g_nonce_is_refused_and_not_recorded() {
    let env = start().await;
    let shellnums = operations::find("allocateShellNums")
        .unwrap()
        .path_with(&[]);
    let assets = operations::find("listAssetNums")
        .unwrap()
        .path_with(&["sim-enterprise"]);
    let app = ("Authorization", format!("Bearer {DEFAULT_APP_TOKEN}"));
    let order = |query: &'static str| {
        let (env, url, app) = (&env, format!("{shellnums}?{query}"), &app);
        async move {
            env.bare("POST", &url, &[(app.0, &app.1)], Some(json!({ "size": 1 })))
                .await
        }
    };
    assert_eq!(order("g_nonce=used").await.code(), "0");
    for query in ["g_nonce=fresh&g_nonce=used", "g_nonce=fresh&g_nonce=fresh"] {
        let twice = order(query).await;
        assert_eq!((twice.status, twice.code()), (299, "13004".to_string()));
        assert!(twice.body["message"].as_str().unwrap().contains("g_nonce"));
    }
    assert_eq!(order("g_nonce=fresh").await.code(), "0", "not recorded");

    let client = format!("Bearer {DEFAULT_CLIENT_TOKEN}");
    let member = env
        .bare(
            "GET",
            &format!("{assets}?g_nonce=m1&g_nonce=m2"),
            &[
                ("Authorization", &client),
                ("clientToken", DEFAULT_CLIENT_TOKEN),
                ("userToken", DEFAULT_USER_TOKEN),
            ],
            None,
        )
        .await;
    // `listAssetNums` documents no `40000`: the service-wide "security check failed".
    assert_eq!((member.status, member.code()), (299, "70001".to_string()));
    assert!(member.body["message"].as_str().unwrap().contains("g_nonce"));
}

/// The page object is consistent on every page, before, on and far past the last one.
#[tokio::test]
async fn every_page_of_list_members_is_self_consistent() {
    let env: Env = start().await;
    let ent = env.enterprise("Pages").await;
    for i in 0..5 {
        let name = format!("pager{i}");
        env.member
            .add_members()
            .enterprise_global_id(&ent.global_id)
            .body(
                licensing_sdk::member::types::AddMembersRequest::builder()
                    .user_list(vec![new_member(&name, "Secret-123", &name)]),
            )
            .await
            .expect("addMembers");
    }
    let path = operations::find("listMembers")
        .unwrap()
        .path_with(&[&ent.global_id]);
    for size in [1, 2, 3, 10] {
        for num in [1, 2, 3, 4, 5, 6, 7, 50, 2_147_483_647] {
            let raw = env
                .raw(
                    "GET",
                    &format!("{path}?pageNum={num}&pageSize={size}"),
                    None,
                )
                .await;
            assert_eq!(raw.status, 200, "{raw:?}");
            check_page(&raw.body["data"], num, size);
        }
    }
}

fn check_page(page: &Value, num: i64, size: i64) {
    let int = |k: &str| page[k].as_i64().unwrap_or_else(|| panic!("{k}: {page}"));
    let flag = |k: &str| page[k].as_bool().unwrap_or_else(|| panic!("{k}: {page}"));
    let what = format!("pageNum {num}, pageSize {size}: {page}");
    let (total, pages) = (int("total"), int("pages"));
    assert_eq!(pages, (total + size - 1) / size, "{what}");
    let on_page = page["list"].as_array().unwrap().len() as i64;
    assert_eq!(int("size"), on_page, "{what}");
    let expected = (total - (num - 1) * size).clamp(0, size);
    assert_eq!(on_page, expected, "{what}");
    if on_page == 0 {
        assert_eq!((int("startRow"), int("endRow")), (0, 0), "{what}");
    } else {
        assert_eq!(int("startRow"), (num - 1) * size + 1, "{what}");
        assert_eq!(int("endRow") - int("startRow") + 1, on_page, "{what}");
    }
    let (pre, next) = (int("prePage"), int("nextPage"));
    assert_eq!(flag("hasPreviousPage"), pre > 0, "{what}");
    assert_eq!(flag("hasNextPage"), next > 0, "{what}");
    assert_eq!(flag("isLastPage"), !flag("hasNextPage"), "{what}");
    assert_eq!(flag("isFirstPage"), num == 1, "{what}");
    assert!(pre < num && (0..=pages).contains(&pre), "{what}");
    if next > 0 {
        assert_eq!(next, num + 1, "{what}");
        assert!(next <= pages, "{what}");
    }
    let nav: Vec<i64> = page["navigatepageNums"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_i64().unwrap())
        .collect();
    assert!(nav.iter().all(|n| (1..=pages).contains(n)), "{what}");
    assert!(nav.windows(2).all(|w| w[1] == w[0] + 1), "{what}");
    assert_eq!(
        int("firstPage"),
        nav.first().copied().unwrap_or(0),
        "{what}"
    );
    assert_eq!(int("lastPage"), nav.last().copied().unwrap_or(0), "{what}");
    if (1..=pages).contains(&num) {
        assert!(nav.contains(&num), "{what}");
    }
    if pre > 0 {
        assert!(nav.contains(&pre), "{what}");
    }
}
