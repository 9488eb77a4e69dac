//! Scale of a batch order: `batchOrder` with 10, 1,000, 10,000 and 50,000 orders (each
//! with an asset, a product with a feature, and a package holding a nested package),
//! measured three ways, each against a floor measured in the same run:
//!
//! * **client side**: the SDK's own work for a batch without the network, step by step
//!   as the SDK does it (see [`sdk_client_side`]): the request given to `.body()` becomes
//!   the operation's builder, is converted back, checked (`Validate`) and serialized once
//!   (`__generated::PreparedBody`), the bytes go into a `reqwest::Request` as the generated
//!   `send()` puts them, and a reply captured from the simulator is decoded as the SDK
//!   decodes it (`ResponseValue::from_response`, then the envelope's code and data). Floor:
//!   `serde_json::to_vec` of the same request and `serde_json::from_slice` of the same
//!   reply bytes into plain structs; both sides drop the request they were given and its
//!   bytes (the SDK owns the request handed to `.body()`).
//! * **simulator side**: the same pre-serialized body posted over one keep-alive HTTP/1.1
//!   connection to `licensing-sim` and to a bare handler (this binary with
//!   `--bare-server`, in its own process: it parses the body into the same generated
//!   `BatchOrderRequest` the simulator reads and answers a fixed reply of the same shape
//!   and length, one result per order). The difference is the simulator's own work.
//! * **round trip**: SDK → simulator → SDK through the public API, against bare
//!   `serde_json` serialize + parse of the same request; with the client's peak heap.
//!   Sizes above 1,000 orders alternate with runs of 1,000 orders, for linearity.
//!
//! Every call to the simulator meets an empty state (reset through the admin API before
//! each; the simulator then hands out the same customer id and asset numbers, so one
//! batch per size serves every run). Times are medians of 21 runs at 1,000 orders and
//! fewer, 5 at 10,000 and 3 at 50,000 (three times as many for the client side, which
//! needs no simulator) after one unmeasured warm-up run, each run's times recorded too
//! for the spread; peak memory is the client's heap growth during the call,
//! counted by a global allocator (the simulator runs in its own process,
//! `LICENSING_SIM_URL`, started by `cargo xtask bench`). A size the simulator refuses is
//! reported as refused, with its floors still measured and, for the client side, a reply
//! synthesized in the simulator's format. Prints one JSON object. Without `--bench`
//! (under `cargo test`) every path runs once with 10 orders against an in-process
//! simulator and only the results are checked.

mod common;

use std::time::Instant;

use bytes::Bytes;
use common::{Counting, Heap, Mode, Perf, Sim, median, raw_client};
use licensing_sdk::{CustomerType, LicenseType, SyncMode, Trial, operations, order::types as o};
use serde::Deserialize;
use serde_json::json;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SIZES: [usize; 4] = [10, 1_000, 10_000, 50_000];
const SMOKE_SIZES: [usize; 1] = [10];
/// Measured runs per size and measurement, after one unmeasured warm-up run (first-touch
/// page faults in both processes otherwise dominate the first large batch).
const RUNS: usize = 5;
/// Measured runs at 1,000 orders and fewer. Such a run takes milliseconds, and one
/// descheduling or burst of page faults moves it by half: five runs of the same build
/// gave medians 1.2× to 1.45× the bare handler, the runs' own ratios 0.7× to 3.7×.
const SMALL_RUNS: usize = 21;
/// Round trips of 1,000 orders before the first and after every measured round trip of a
/// larger batch: the 1,000-order cost its linearity is measured against.
const FLANK_RUNS: usize = 3;
const APP_TOKEN: &str = licensing_sim::DEFAULT_APP_TOKEN;

// ------------------------------------------------------------------------- the batch

fn product(crm: &str, parent: &str) -> o::Product {
    o::Product::builder()
        .crm_product_id(crm)
        .parent_crm_product_id(parent)
        .product_uri("gms-3001")
        .product_name("CAD Suite")
        .gms_pid(Some("gms-3001".to_string()))
        .product_type("software")
        .limit_start_date(Some(1_767_225_600_000))
        .limit_end_date(Some(1_798_761_600_000))
        .limit_concurrent(5)
        .limit_time_duration(0)
        .strict_match_when_delete(false)
        .trial(Trial::NotTrial)
        .trial_end_date(0)
        .time_unit("year")
        .time_unit_quantity(1)
        .time_duration_expression("1-0-0")
        .product_features(vec![
            o::ProductFeature::builder()
                .feature_code("F01")
                .feature_name("Seats")
                .feature_value("10")
                .feature_value_type("int")
                .trial(Trial::NotTrial)
                .trial_end_date(chrono::NaiveDate::from_ymd_opt(2027, 12, 31).unwrap()),
        ])
        .try_into()
        .unwrap()
}

fn package(
    crm: &str,
    parent: &str,
    num: &str,
    children: Option<Vec<o::Merchandise>>,
) -> o::Merchandise {
    o::Merchandise::builder()
        .crm_product_id(crm)
        .parent_crm_product_id(parent)
        .merchandise_num(num)
        .merchandise_name("Design bundle")
        .parent_merchandise_num("")
        .time_duration_expression("1-0-0")
        .children(children)
        .license_order_product_list(vec![product(&format!("{crm}-P"), crm)])
        .try_into()
        .unwrap()
}

fn request(
    customer: &o::EnterpriseCustomer,
    numbers: &[String],
    batch: usize,
) -> o::BatchOrderRequest {
    let orders = numbers
        .iter()
        .enumerate()
        .map(|(i, num)| {
            let a = format!("A-{batch}-{i}");
            let inner = package(&format!("{a}-M2"), &format!("{a}-M1"), "PKG-2", None);
            let outer = package(&format!("{a}-M1"), &a, "PKG-1", Some(vec![inner]));
            let order: o::NewBuyOrder = o::NewBuyOrder::builder()
                .sequence(i as i32 + 1)
                .customer_id(customer.customer_id.clone())
                .crm_customer_id("CRM-9")
                .customer_name("Acme Robotics")
                .channel_customer_id("CC-42")
                .admin_name("Ada Admin")
                .admin_account("ada")
                .admin_email("ada@example.com")
                .admin_cell_number("13800000000")
                .password_mobile("13800000000")
                .address("1 Main Street")
                .customer_type(CustomerType::Company)
                .branch_code("BR01")
                .branch_name("North")
                .enterprise_global_id(customer.enterprise_global_id.clone())
                .license_type(LicenseType::NormalRecoverUsbkey)
                .assets(vec![
                    o::Asset::builder()
                        .asset_nos(vec![num.clone()])
                        .products(vec![product(&format!("{a}-P"), &a)])
                        .merchandises(vec![outer]),
                ])
                .try_into()
                .unwrap();
            o::LicenseOrder::NewBuy(order)
        })
        .collect::<Vec<o::LicenseOrder>>();
    o::BatchOrderRequest::builder()
        .channel_code("CH01")
        .channel_order_id(format!("CO-{batch}"))
        .sync_mode(SyncMode::Sync)
        .order_list(orders)
        .try_into()
        .unwrap()
}

// ------------------------------------------------------------------------- replies

/// A batch reply as a hand-written client would read it.
#[derive(Deserialize)]
struct PlainReply {
    code: serde_json::Value,
    message: String,
    #[serde(default)]
    data: Vec<PlainResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct PlainResult {
    customer_id: String,
    license_order_id: String,
    sequence: i32,
}

/// The simulator's reply to `n` orders of `customer`, in its format (`LO-` and six
/// digits), for a size the simulator refused: the client side still has a reply to decode.
fn synthesized_reply(customer: &str, n: usize) -> Bytes {
    let data: Vec<_> = (1..=n)
        .map(|i| json!({"customerId": customer, "licenseOrderId": format!("LO-{:06}", i + 3), "sequence": i}))
        .collect();
    Bytes::from(
        serde_json::to_vec(&json!({"code": 0, "message": "success", "data": data})).unwrap(),
    )
}

/// What the bare handler answers to `n` orders: the simulator's reply shape and length,
/// one fixed result per order.
fn fixed_reply(n: usize) -> Vec<u8> {
    const ITEM: &[u8] = br#"{"customerId":"C100001","licenseOrderId":"LO-000001","sequence":1}"#;
    let mut out = Vec::with_capacity(48 + n * (ITEM.len() + 1));
    out.extend_from_slice(br#"{"code":0,"message":"success","data":["#);
    for i in 0..n {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(ITEM);
    }
    out.extend_from_slice(b"]}");
    out
}

// ------------------------------------------------------------------------- client side

/// The SDK's work for one batch call without the network, step by step as the SDK does
/// it: `.body(req)` makes the request the operation's builder; awaiting it prepares the
/// body once per call (the generated `prepare()`: `try_from` the builder, then
/// `__generated::PreparedBody::new`, which checks `Validate`, serializes and drops the
/// request); each attempt's `send()` builds its `reqwest::Request` around those bytes and
/// the client hook adds a fresh `g_nonce`; the reply is decoded by
/// `ResponseValue::from_response` and the envelope (`envelope` in `src/runtime/reply.rs`:
/// the code, then `data`).
async fn sdk_client_side(
    http: &reqwest::Client,
    url: &str,
    req: o::BatchOrderRequest,
    reply: &Bytes,
) -> Vec<o::BatchOrderResultItem> {
    use licensing_sdk::runtime::Envelope as _;
    // `.body(req)`
    let builder = o::builder::BatchOrderRequest::from(req);
    // `prepare()`
    let converted = o::BatchOrderRequest::try_from(builder).map_err(|e| e.to_string());
    let prepared = licensing_sdk::__generated::PreparedBody::new(converted).unwrap();
    // `send()` and the client hook
    let mut request = http
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(prepared.body())
        .query(&[("appKey", "bench")])
        .build()
        .unwrap();
    request
        .url_mut()
        .query_pairs_mut()
        .append_pair("g_nonce", &licensing_sdk::runtime::nonce());
    // Sent with its exact length (`Content-Length`), in the chunks it was written to.
    let body = request.body().expect("a body");
    assert_eq!(
        http_body::Body::size_hint(body).exact(),
        Some(prepared.len())
    );
    drop(request); // sent
    // The reply
    let response = http::Response::builder()
        .status(200)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(reply.clone())
        .unwrap();
    let value = progenitor_client::ResponseValue::<o::BatchOrderReply>::from_response::<()>(
        reqwest::Response::from(response),
    )
    .await
    .unwrap();
    let parts = value.into_inner().into_parts();
    assert!(parts.code.is_success(), "{}", parts.message);
    drop(prepared); // the call returns
    parts.data.unwrap()
}

// ------------------------------------------------------------------------- bare handler

/// `--bare-server`: serves the bare batch handler on a free port of 127.0.0.1 and prints
/// `listening on http://ADDR`.
fn bare_server() {
    use axum::handler::HandlerWithoutStateExt as _;
    async fn handle(req: axum::extract::Request) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        let body = match axum::body::to_bytes(req.into_body(), usize::MAX).await {
            Ok(body) => body,
            Err(e) => return (http::StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        };
        let n = match serde_json::from_slice::<o::BatchOrderRequest>(&body) {
            Ok(parsed) => parsed.order_list.len(),
            Err(e) => return (http::StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        };
        (
            [(http::header::CONTENT_TYPE, "application/json")],
            fixed_reply(n),
        )
            .into_response()
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            println!("listening on http://{}", listener.local_addr().unwrap());
            axum::serve(listener, handle.into_make_service())
                .await
                .unwrap();
        });
}

/// The bare handler in a child process (this binary), killed when dropped.
struct Bare {
    child: std::process::Child,
    url: String,
}

impl Bare {
    fn start() -> Self {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--bare-server")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("starting the bare handler");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .expect("the bare handler's address")
            .to_string();
        Self { child, url }
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw POST of `body`: the time to the last byte of the reply, the status, the reply.
async fn raw_post(http: &reqwest::Client, url: &str, body: &Bytes) -> (f64, u16, Bytes) {
    let url = format!("{url}&g_nonce={}", licensing_sdk::runtime::nonce());
    let t = Instant::now();
    let response = http
        .post(url)
        .header(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {APP_TOKEN}"),
        )
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body.clone())
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let reply = response.bytes().await.expect("a whole reply");
    (t.elapsed().as_secs_f64() * 1e6, status, reply)
}

// ------------------------------------------------------------------------- set-up

struct Setup {
    sim: Sim,
    http: reqwest::Client,
    client: licensing_sdk::order::Client,
}

impl Setup {
    /// An empty simulator with one bound customer and `n` fresh asset numbers. After a
    /// reset the simulator hands out the same ids and numbers again, so one batch serves
    /// every run of a size.
    async fn prepare(&self, n: usize) -> (o::EnterpriseCustomer, Vec<String>) {
        self.sim.reset(&self.http).await;
        let customer = self
            .client
            .bind_enterprise()
            .body(
                o::BindEnterpriseRequest::builder()
                    .channel_code("CH01")
                    .channel_customer_id("CC-bench")
                    .customer_name("Acme Robotics")
                    .branch_name("North")
                    .enterprise_name("Bench")
                    .password_mobile("13800000000"),
            )
            .await
            .unwrap();
        let mut numbers = Vec::with_capacity(n);
        while numbers.len() < n {
            let size = (n - numbers.len()).min(1000) as u32;
            let got = self
                .client
                .allocate_shell_nums()
                .body(o::AllocateShellNumsRequest::builder().size(size))
                .await
                .unwrap();
            numbers.extend(got.into_iter().map(|s| s.0));
        }
        (customer, numbers)
    }

    /// One SDK round trip of `req` (built from `first`) against an emptied simulator:
    /// its time in µs and the client's peak heap growth. `perf` sees it when given.
    async fn round_trip(
        &self,
        first: &(o::EnterpriseCustomer, Vec<String>),
        req: &o::BatchOrderRequest,
        mut perf: Option<&mut Perf>,
    ) -> (f64, usize) {
        let n = req.order_list.len();
        self.prepare_again(first).await;
        let ours = req.clone();
        let heap = Heap::start();
        let t = Instant::now();
        if let Some(p) = perf.as_mut() {
            p.enable();
        }
        let result = self.client.batch_order().app_key("bench").body(ours).await;
        if let Some(p) = perf.as_mut() {
            p.disable();
        }
        let elapsed = t.elapsed().as_secs_f64() * 1e6;
        let peak = heap.peak();
        let items = result.unwrap_or_else(|e| panic!("{n} orders: {e}"));
        assert_eq!(items.len(), n);
        drop(items);
        (elapsed, peak)
    }

    /// `runs` round trips of `batch` (set-up and request), their times in µs; a profile
    /// does not see them.
    async fn round_trips(
        &self,
        batch: &((o::EnterpriseCustomer, Vec<String>), o::BatchOrderRequest),
        runs: usize,
    ) -> Vec<f64> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            times.push(self.round_trip(&batch.0, &batch.1, None).await.0);
        }
        times
    }

    /// [`Setup::prepare`] for a batch already built from `first`'s customer and numbers.
    async fn prepare_again(&self, first: &(o::EnterpriseCustomer, Vec<String>)) {
        let again = self.prepare(first.1.len()).await;
        assert_eq!(
            again.0.customer_id, first.0.customer_id,
            "same customer after a reset"
        );
        assert!(again.1 == first.1, "same asset numbers after a reset");
    }
}

// ------------------------------------------------------------------------- main

fn main() {
    if std::env::args().any(|a| a == "--bare-server") {
        return bare_server();
    }
    let mode = Mode::from_args();
    let rt = match mode {
        // The client measured on one thread, as a caller's task runs.
        Mode::Bench => tokio::runtime::Builder::new_current_thread(),
        // The in-process simulator needs threads of its own.
        Mode::Smoke => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
    .unwrap();
    let out = rt.block_on(run(mode));
    println!("{out}");
}

/// Measured runs at `n` orders: fewer for the largest batches, which take seconds each.
fn runs_at(mode: Mode, n: usize) -> usize {
    if let Ok(runs) = std::env::var("BATCH_RUNS") {
        return runs.parse().expect("BATCH_RUNS: a number");
    }
    match mode {
        Mode::Smoke => 0,
        Mode::Bench if n > 10_000 => 3,
        Mode::Bench if n > 1_000 => RUNS,
        Mode::Bench => SMALL_RUNS,
    }
}

/// To profile one part, `BATCH_SIZES` (`10000`, or a comma-separated list) and
/// `BATCH_PARTS` (any of `sim`, `client`, `round_trip`; `client-sdk` for the client
/// side without its floor) narrow the run, and `BATCH_RUNS` sets the measured runs;
/// without `sim`, the client side decodes a synthesized reply. `PERF_CTL_FIFO` and
/// `PERF_ACK_FIFO` let a `perf record -D -1 --control=fifo:CTL,ACK` see the measured
/// calls only (`common::Perf`).
fn selection(mode: Mode) -> (Vec<usize>, impl Fn(&str) -> bool) {
    let sizes = match std::env::var("BATCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|n| {
                n.trim()
                    .replace('_', "")
                    .parse()
                    .expect("BATCH_SIZES: numbers")
            })
            .collect(),
        Err(_) if mode == Mode::Smoke => SMOKE_SIZES.to_vec(),
        Err(_) => SIZES.to_vec(),
    };
    let parts = std::env::var("BATCH_PARTS").unwrap_or_else(|_| "sim,client,round_trip".into());
    (sizes, move |part: &str| {
        parts.split(',').any(|p| p.trim() == part)
    })
}

async fn run(mode: Mode) -> serde_json::Value {
    let (sizes, part) = selection(mode);
    let sim = Sim::get(mode, 1000).await;
    let bare = Bare::start();
    let http = raw_client();
    let client = licensing_sdk::order::Client::builder(&sim.url)
        .application_token(APP_TOKEN)
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .unwrap();
    let path = operations::BATCH_ORDER.path;
    let sim_url = format!("{}{path}?appKey=bench", sim.url);
    let bare_url = format!("{}{path}?appKey=bench", bare.url);
    let setup = Setup {
        sim,
        http: http.clone(),
        client,
    };
    let mut perf = Perf::from_env();
    let mut results = Vec::new();
    // The 1,000-order batch (its set-up and request), kept for linearity.
    let mut linear: Option<((o::EnterpriseCustomer, Vec<String>), o::BatchOrderRequest)> = None;
    for n in sizes {
        let started = Instant::now();
        let runs = runs_at(mode, n);
        // Run 0 warms up (unless it is the only one).
        let measured = |run: usize| run > 0 || runs == 0;
        let first = setup.prepare(n).await;
        let req = request(&first.0, &first.1, n);
        let body = Bytes::from(serde_json::to_vec(&req).unwrap());
        let payload = body.len();

        // Simulator side: the same bytes to the simulator and to the bare handler.
        let (mut sim_t, mut bare_t) = (Vec::new(), Vec::new());
        let (mut captured, mut refused) = (None, None::<String>);
        for run in 0..=runs {
            if !part("sim") {
                break;
            }
            if run > 0 {
                setup.prepare_again(&first).await;
            }
            // Alternate which server goes first, so drift affects both alike.
            for sim_first in [run % 2 == 0, run % 2 == 1] {
                if !sim_first {
                    let (t, status, reply) = raw_post(&http, &bare_url, &body).await;
                    assert_eq!(status, 200, "bare: {}", String::from_utf8_lossy(&reply));
                    let parsed: PlainReply = serde_json::from_slice(&reply).unwrap();
                    assert_eq!(parsed.data.len(), n);
                    if measured(run) {
                        bare_t.push(t);
                    }
                } else if refused.is_none() {
                    perf.enable();
                    let (t, status, reply) = raw_post(&http, &sim_url, &body).await;
                    perf.disable();
                    assert!(matches!(status, 200 | 299), "simulator: HTTP {status}");
                    let parsed: PlainReply = serde_json::from_slice(&reply).unwrap();
                    if parsed.code != 0 {
                        eprintln!(
                            "{n} orders: the simulator refused the batch: {}",
                            parsed.message
                        );
                        refused = Some(parsed.message);
                        continue;
                    }
                    assert_eq!(parsed.data.len(), n, "one result per order");
                    if measured(run) {
                        sim_t.push(t);
                    }
                    captured = Some(reply);
                }
            }
        }

        // Client side: the SDK's work on the batch and the captured reply.
        let reply = captured
            .clone()
            .unwrap_or_else(|| synthesized_reply(&first.0.customer_id, n));
        let (mut sdk_t, mut floor_t, mut client_peaks) = (Vec::new(), Vec::new(), Vec::new());
        // Three times the runs: no simulator involved, so they are cheap, and they vary.
        let client_runs = runs * 3;
        for run in 0..=client_runs {
            if !part("client") && !part("client-sdk") {
                break;
            }
            // `client-sdk`: the SDK's side alone, for a profile of it.
            let floor_too = part("client");
            let (mut floor, mut sdk, mut peak) = (f64::NAN, f64::NAN, 0);
            // Alternate which side goes first, so the allocator's state and drift affect
            // both alike. Each side's copy of the request is made just before its turn, so
            // neither starts with the other's freshly written (cache-warm) copy.
            for sdk_turn in [run % 2 == 1, run % 2 == 0] {
                if sdk_turn {
                    let ours = req.clone();
                    let heap = Heap::start();
                    let t = Instant::now();
                    perf.enable();
                    let items = sdk_client_side(&http, &sim_url, ours, &reply).await;
                    perf.disable();
                    sdk = t.elapsed().as_secs_f64() * 1e6;
                    peak = heap.peak();
                    assert_eq!(items.len(), n);
                    assert!(
                        items
                            .iter()
                            .enumerate()
                            .all(|(i, r)| r.sequence as usize == i + 1)
                    );
                } else if floor_too {
                    let theirs = req.clone();
                    // Given the request, as the SDK is: it drops the request and the
                    // bytes once sent, as the SDK does (the reply's items outlive both).
                    let t = Instant::now();
                    let bytes = serde_json::to_vec(&theirs).unwrap();
                    let sent = bytes.len();
                    drop((bytes, theirs));
                    let plain: PlainReply = serde_json::from_slice(&reply).unwrap();
                    floor = t.elapsed().as_secs_f64() * 1e6;
                    assert_eq!((sent, plain.data.len()), (payload, n));
                }
            }
            if measured(run) {
                floor_t.push(floor);
                sdk_t.push(sdk);
                client_peaks.push(peak as f64);
            }
        }

        // Round trip: SDK → simulator → SDK, against serialize + parse of the request.
        let (mut rt_t, mut rt_floor, mut rt_peaks) = (Vec::new(), Vec::new(), Vec::new());
        // Round trips of 1,000 orders around this size's, for linearity.
        let mut small_t = Vec::new();
        for run in 0..=runs {
            if !part("round_trip") {
                break;
            }
            let t = Instant::now();
            let bytes = serde_json::to_vec(&req).unwrap();
            let parsed: o::BatchOrderRequest = serde_json::from_slice(&bytes).unwrap();
            let floor = t.elapsed().as_secs_f64() * 1e6;
            assert_eq!(parsed.order_list.len(), n);
            drop((bytes, parsed));
            if measured(run) {
                rt_floor.push(floor);
            }
            if refused.is_some() {
                continue; // the floor only: the simulator takes no batch of this size
            }
            // Linearity compares this size with 1,000 orders. Each measured run sits
            // between runs of 1,000 orders, so both sizes see the same machine: its speed
            // drifts by more than the target's margin within a minute.
            let flank = linear.as_ref().filter(|_| n > 1_000 && measured(run));
            if let Some(small) = flank
                && small_t.is_empty()
            {
                small_t.extend(setup.round_trips(small, FLANK_RUNS).await);
            }
            let (elapsed, peak) = setup.round_trip(&first, &req, Some(&mut perf)).await;
            if measured(run) {
                rt_t.push(elapsed);
                rt_peaks.push(peak as f64);
            }
            if let Some(small) = flank {
                small_t.extend(setup.round_trips(small, FLANK_RUNS).await);
            }
        }
        if n == 1_000 {
            linear = Some((first, req));
        } else {
            drop(req);
        }

        let max = |v: Vec<f64>| v.into_iter().fold(f64::NAN, f64::max);
        let linear_at_n = linearity(n, &rt_t, &small_t);
        let row = json!({
            "orders": n,
            "runs": runs.max(1),
            "client_runs": client_runs.max(1),
            "payload_bytes": payload,
            "reply_bytes": reply.len(),
            "reply": if captured.is_some() { "captured" } else { "synthesized" },
            "refused": refused,
            // Each measured run's time too (`*_runs_us`, in run order), for the spread.
            "client": {
                "sdk_us": median(sdk_t.clone()), "floor_us": median(floor_t.clone()),
                "sdk_runs_us": sdk_t, "floor_runs_us": floor_t,
                "sdk_peak_bytes": max(client_peaks.clone()), "sdk_peak_runs_bytes": client_peaks,
            },
            "sim": {
                "sim_us": median(sim_t.clone()), "bare_us": median(bare_t.clone()),
                "sim_runs_us": sim_t, "bare_runs_us": bare_t,
            },
            "round_trip": {
                "sdk_us": median(rt_t.clone()), "floor_us": median(rt_floor.clone()),
                "sdk_runs_us": rt_t, "floor_runs_us": rt_floor,
                "sdk_peak_bytes": max(rt_peaks.clone()), "sdk_peak_runs_bytes": rt_peaks,
            },
            "linearity": linear_at_n,
            "seconds": started.elapsed().as_secs_f64(),
        });
        eprintln!("{row}");
        results.push(row);
    }
    setup.sim.reset(&setup.http).await;
    json!({"sizes": results})
}

/// Linearity at `n` orders: the median cost per order of its round trips against that
/// of the 1,000-order round trips run around them (`null` when there were none).
fn linearity(n: usize, large: &[f64], small: &[f64]) -> serde_json::Value {
    if small.is_empty() || large.is_empty() {
        return serde_json::Value::Null;
    }
    let large = median(large.to_vec()) / n as f64;
    let small = median(small.to_vec()) / 1_000.0;
    json!({
        "us_per_order": large,
        "us_per_order_at_1000": small,
        "runs_at_1000": FLANK_RUNS,
        "ratio": large / small,
    })
}
