//! SDK call overhead: the same operations through the SDK and through a hand-written
//! `reqwest` + `serde_json` call, against one in-process server answering fixed bodies.
//!
//! Both sides send the same request on the wire (path, query with a fresh random
//! `g_nonce`, bearer token, JSON body) and decode the same reply into typed values; the
//! difference is what the SDK adds: hooks, validation, retries bookkeeping, the envelope
//! step. Calls are interleaved, each side first in turn, so drift affects both alike. Each
//! comparison runs over plain HTTP and over HTTPS (the server's certificate made at run
//! time, both sides trusting its CA through one shared `reqwest` client). The calls are
//! also cut into consecutive blocks whose ratios give the spread of the ratio within the
//! run. Prints one JSON object. Without `--bench` each comparison makes a few calls only (a smoke run).

use std::time::{Duration, Instant};

use axum::{Router, routing::get, routing::post};
use licensing_sdk::{DefaultCustomer, RetryPolicy, operations, order};
use serde::{Deserialize, Serialize};

const WARMUP: usize = 300;
const ITERATIONS: usize = 6_000;
/// The measured calls are cut into this many consecutive blocks, and each block's ratio
/// is taken on its own: their range is the ratio's spread within the run.
const BLOCKS: usize = 20;
/// Without `--bench` (a smoke run of `cargo xtask bench --smoke`): a few calls of each
/// kind, to check the set-up, not to time it.
const SMOKE_ITERATIONS: usize = 5;
const TOKEN: &str = "bench-token";

fn customers(n: usize) -> serde_json::Value {
    let list: Vec<_> = (0..n)
        .map(|i| {
            serde_json::json!({
                "customerId": format!("C{i:06}"), "channelCode": "CH01",
                "channelCustomerId": "CC-42", "enterpriseGlobalId": format!("EG-{i}"),
                "enterpriseName": "Acme Robotics", "isDefault": i == 0,
            })
        })
        .collect();
    serde_json::json!({"code": 0, "message": "success", "data": list})
}

// The hand-written side: what a caller would write without the SDK.
#[derive(Deserialize)]
struct Envelope<T> {
    code: serde_json::Value,
    #[allow(dead_code)]
    message: String,
    data: Option<T>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Customer {
    customer_id: String,
    channel_code: String,
    channel_customer_id: String,
    enterprise_global_id: String,
    enterprise_name: String,
    is_default: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Bind<'a> {
    channel_code: &'a str,
    channel_customer_id: &'a str,
    customer_name: &'a str,
    branch_name: &'a str,
    enterprise_name: &'a str,
    password_mobile: &'a str,
}

fn hand_nonce() -> String {
    licensing_sdk::runtime::nonce()
}

async fn hand_query(http: &reqwest::Client, base: &str) -> Vec<Customer> {
    let reply: Envelope<Vec<Customer>> = http
        .get(format!("{base}{}", operations::QUERY_ENTERPRISE.path))
        .query(&[
            ("channelCode", "CH01"),
            ("channelCustomerId", "CC-42"),
            ("defaultCustomer", "N"),
            ("g_nonce", &hand_nonce()),
        ])
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply.code, 0);
    reply.data.unwrap()
}

async fn hand_bind(http: &reqwest::Client, base: &str) -> Customer {
    let reply: Envelope<Customer> = http
        .post(format!("{base}{}", operations::BIND_ENTERPRISE.path))
        .query(&[("g_nonce", &hand_nonce())])
        .bearer_auth(TOKEN)
        .json(&Bind {
            channel_code: "CH01",
            channel_customer_id: "CC-42",
            customer_name: "Acme Robotics",
            branch_name: "North",
            enterprise_name: "Acme Robotics",
            password_mobile: "13800000000",
        })
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply.code, 0);
    reply.data.unwrap()
}

async fn sdk_query(client: &order::Client) -> Vec<order::types::EnterpriseCustomer> {
    client
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("CC-42")
        .default_customer(DefaultCustomer::All)
        .await
        .unwrap()
}

async fn sdk_bind(client: &order::Client) -> order::types::EnterpriseCustomer {
    client
        .bind_enterprise()
        .body(
            order::types::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id("CC-42")
                .customer_name("Acme Robotics")
                .branch_name("North")
                .enterprise_name("Acme Robotics")
                .password_mobile("13800000000"),
        )
        .await
        .unwrap()
}

fn summary(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    (at(0.5), at(0.99))
}

use licensing_test_support::pki;

/// The fixed-reply server both sides call.
fn app() -> Router {
    let list = customers(20).to_string();
    let one = serde_json::json!({"code": 0, "message": "success", "data": customers(1)["data"][0]})
        .to_string();
    Router::new()
        .route(
            operations::QUERY_ENTERPRISE.path,
            get(move || {
                let body = list.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        )
        .route(
            operations::BIND_ENTERPRISE.path,
            post(move || {
                let body = one.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        )
}

/// Starts the server on its own thread, so both sides compete with it equally; returns the
/// base URL.
fn start_server(tls: Option<licensing_sim::TlsConfig>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = match tls {
        Some(_) => format!("https://localhost:{port}"),
        None => format!("http://127.0.0.1:{port}"),
    };
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                match tls {
                    Some(tls) => tls.serve(listener, app()).await.unwrap(),
                    None => axum::serve(listener, app()).await.unwrap(),
                }
            })
    });
    base
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let pki = pki::Pki::new();
    let tls = licensing_sim::TlsConfig::from_pem(pki.cert.as_bytes(), pki.key.as_bytes()).unwrap();
    let mut results = serde_json::Map::new();
    for (suffix, tls) in [("", None), ("_https", Some(tls))] {
        let https = tls.is_some();
        let base = start_server(tls);
        // The same request on the wire: the SDK sends its user agent, so the hand side does.
        let mut http = reqwest::Client::builder()
            .user_agent(concat!("licensing-sdk/", env!("CARGO_PKG_VERSION")));
        if https {
            http =
                http.tls_certs_only([reqwest::Certificate::from_pem(pki.ca.as_bytes()).unwrap()]);
        }
        let http = http.build().unwrap();
        let sdk = order::Client::builder(&base)
            .application_token(TOKEN)
            .http_client(http.clone())
            .retry(RetryPolicy::default())
            .build()
            .unwrap();
        if let Ok(which) = std::env::var("OVERHEAD_PROFILE") {
            profile(&which, &http, &sdk, &base).await;
            return;
        }
        measure(&mut results, suffix, &http, &sdk, &base).await;
    }
    println!("{}", serde_json::Value::Object(results));
}

/// `OVERHEAD_PROFILE=sdk_get|hand_get|sdk_post|hand_post`: only that side's calls, plain
/// HTTP, so a profiler (`valgrind --tool=callgrind`, `perf record`) sees one side alone;
/// the difference between two sides' instruction counts is what the SDK adds.
async fn profile(which: &str, http: &reqwest::Client, sdk: &order::Client, base: &str) {
    let calls: usize = std::env::var("OVERHEAD_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000);
    for _ in 0..calls {
        match which {
            "sdk_get" => assert_eq!(sdk_query(sdk).await.len(), 20),
            "hand_get" => assert_eq!(hand_query(http, base).await.len(), 20),
            "sdk_post" => assert_eq!(sdk_bind(sdk).await.channel_code, "CH01"),
            "hand_post" => assert_eq!(hand_bind(http, base).await.channel_code, "CH01"),
            other => panic!("OVERHEAD_PROFILE: unknown side {other}"),
        }
    }
}

async fn measure(
    results: &mut serde_json::Map<String, serde_json::Value>,
    suffix: &str,
    http: &reqwest::Client,
    sdk: &order::Client,
    base: &str,
) {
    let (warmup, iterations) = if std::env::args().any(|a| a == "--bench") {
        (WARMUP, ITERATIONS)
    } else {
        (0, SMOKE_ITERATIONS)
    };
    for op in ["get_list", "post_body"] {
        let (mut ours, mut hand) = (
            Vec::with_capacity(iterations),
            Vec::with_capacity(iterations),
        );
        for i in 0..warmup + iterations {
            // Alternate which side goes first, so neither always follows the other's
            // reply (or the loop's own work) and drift affects both alike.
            let (mut sdk_time, mut hand_time) = (Duration::ZERO, Duration::ZERO);
            for sdk_turn in [i % 2 == 0, i % 2 == 1] {
                let t = Instant::now();
                match (sdk_turn, op) {
                    (true, "get_list") => assert_eq!(sdk_query(sdk).await.len(), 20),
                    (true, _) => assert_eq!(sdk_bind(sdk).await.channel_code, "CH01"),
                    (false, "get_list") => assert_eq!(hand_query(http, base).await.len(), 20),
                    (false, _) => assert_eq!(hand_bind(http, base).await.channel_code, "CH01"),
                }
                if sdk_turn {
                    sdk_time = t.elapsed();
                } else {
                    hand_time = t.elapsed();
                }
            }
            if i >= warmup {
                ours.push(sdk_time);
                hand.push(hand_time);
            }
        }
        let block = (iterations / BLOCKS).max(1);
        let (mut median_ratios, mut p99_ratios): (Vec<f64>, Vec<f64>) = ours
            .chunks(block)
            .zip(hand.chunks(block))
            .map(|(o, h)| {
                let ((om, op), (hm, hp)) = (summary(o.to_vec()), summary(h.to_vec()));
                (om / hm, op / hp)
            })
            .unzip();
        median_ratios.sort_by(f64::total_cmp);
        p99_ratios.sort_by(f64::total_cmp);
        let spread = |r: &[f64]| serde_json::json!([r[0], r[r.len() - 1]]);
        let (ours_median, ours_p99) = summary(ours);
        let (hand_median, hand_p99) = summary(hand);
        results.insert(
            format!("{op}{suffix}"),
            serde_json::json!({
                "iterations": iterations,
                "sdk_median_us": ours_median, "sdk_p99_us": ours_p99,
                "hand_median_us": hand_median, "hand_p99_us": hand_p99,
                "ratio_median": ours_median / hand_median, "ratio_p99": ours_p99 / hand_p99,
                "blocks": median_ratios.len(),
                "ratio_median_spread": spread(&median_ratios),
                "ratio_p99_spread": spread(&p99_ratios),
            }),
        );
    }
}
