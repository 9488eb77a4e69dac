//! Scale of a batch order: `batchOrder` with 10, 1,000, 10,000 and 50,000 orders (each
//! with an asset, a product with a feature, and a package holding a nested package),
//! measured three ways, each against a floor measured in the same run:
//!
//! * **client side**: the SDK's own work for a batch without the network, step by step
//!   as the SDK does it (see `client::sdk_client_side`): the request given to `.body()` becomes
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

mod client;
#[path = "../common/mod.rs"]
mod common;
mod orders;
mod setup;
mod wire;

use std::time::Instant;

use bytes::Bytes;
use common::{Counting, Heap, Mode, Perf, Sim, median, raw_client};
use licensing_sdk::{operations, order::types as o};
use serde_json::json;
use setup::Setup;
use wire::{Bare, PlainReply, raw_post};

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

// ------------------------------------------------------------------------- main

fn main() {
    if std::env::args().any(|a| a == "--bare-server") {
        return wire::bare_server();
    }
    let mode = Mode::from_args();
    let out = mode.runtime().block_on(run(mode));
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

/// One size's batch: its set-up (customer and asset numbers), the request and its bytes.
struct Batch {
    n: usize,
    /// Measured runs; run 0 warms up (unless it is the only one).
    runs: usize,
    first: (o::EnterpriseCustomer, Vec<String>),
    req: o::BatchOrderRequest,
    body: Bytes,
}

impl Batch {
    fn measured(&self, run: usize) -> bool {
        run > 0 || self.runs == 0
    }
}

/// The simulator side's runs, and the simulator's reply (or why it refused the batch).
#[derive(Default)]
struct SimSide {
    sim_t: Vec<f64>,
    bare_t: Vec<f64>,
    captured: Option<Bytes>,
    refused: Option<String>,
}

/// The client side's runs.
#[derive(Default)]
struct ClientSide {
    sdk_t: Vec<f64>,
    floor_t: Vec<f64>,
    peaks: Vec<f64>,
}

/// The round trip's runs, and the 1,000-order round trips run around them.
#[derive(Default)]
struct RoundTrip {
    t: Vec<f64>,
    floor: Vec<f64>,
    peaks: Vec<f64>,
    small_t: Vec<f64>,
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
        let first = setup.prepare(n).await;
        let req = orders::request(&first.0, &first.1, n);
        let body = Bytes::from(serde_json::to_vec(&req).unwrap());
        let batch = Batch {
            n,
            runs: runs_at(mode, n),
            first,
            req,
            body,
        };
        let payload = batch.body.len();
        let sim_side = if part("sim") {
            sim_side(&setup, (&sim_url, &bare_url), &batch, &mut perf).await
        } else {
            SimSide::default()
        };
        // Client side: the SDK's work on the batch and the captured reply.
        let reply = sim_side
            .captured
            .clone()
            .unwrap_or_else(|| wire::synthesized_reply(&batch.first.0.customer_id, n));
        // Three times the runs: no simulator involved, so they are cheap, and they vary.
        let client_runs = batch.runs * 3;
        let client_side = if part("client") || part("client-sdk") {
            // `client-sdk`: the SDK's side alone, for a profile of it.
            let floor_too = part("client");
            client_side(
                &http,
                &sim_url,
                &batch,
                &reply,
                client_runs,
                floor_too,
                &mut perf,
            )
            .await
        } else {
            ClientSide::default()
        };
        let round_trip = if part("round_trip") {
            let refused = sim_side.refused.is_some();
            round_trip(&setup, &batch, refused, linear.as_ref(), &mut perf).await
        } else {
            RoundTrip::default()
        };
        let max = |v: Vec<f64>| v.into_iter().fold(f64::NAN, f64::max);
        let row = json!({
            "orders": n,
            "runs": batch.runs.max(1),
            "client_runs": client_runs.max(1),
            "payload_bytes": payload,
            "reply_bytes": reply.len(),
            "reply": if sim_side.captured.is_some() { "captured" } else { "synthesized" },
            "refused": sim_side.refused,
            // Each measured run's time too (`*_runs_us`, in run order), for the spread.
            "client": {
                "sdk_us": median(client_side.sdk_t.clone()), "floor_us": median(client_side.floor_t.clone()),
                "sdk_runs_us": client_side.sdk_t, "floor_runs_us": client_side.floor_t,
                "sdk_peak_bytes": max(client_side.peaks.clone()), "sdk_peak_runs_bytes": client_side.peaks,
            },
            "sim": {
                "sim_us": median(sim_side.sim_t.clone()), "bare_us": median(sim_side.bare_t.clone()),
                "sim_runs_us": sim_side.sim_t, "bare_runs_us": sim_side.bare_t,
            },
            "round_trip": {
                "sdk_us": median(round_trip.t.clone()), "floor_us": median(round_trip.floor.clone()),
                "sdk_runs_us": round_trip.t, "floor_runs_us": round_trip.floor,
                "sdk_peak_bytes": max(round_trip.peaks.clone()), "sdk_peak_runs_bytes": round_trip.peaks,
            },
            "linearity": linearity(n, &round_trip.t, &round_trip.small_t),
            "seconds": started.elapsed().as_secs_f64(),
        });
        if n == 1_000 {
            linear = Some((batch.first, batch.req));
        }
        eprintln!("{row}");
        results.push(row);
    }
    setup.sim.reset(&setup.http).await;
    json!({"sizes": results})
}

/// Simulator side: the same bytes to the simulator and to the bare handler, the two
/// taking turns going first.
async fn sim_side(
    setup: &Setup,
    (sim_url, bare_url): (&str, &str),
    batch: &Batch,
    perf: &mut Perf,
) -> SimSide {
    let (n, http) = (batch.n, &setup.http);
    let mut side = SimSide::default();
    for run in 0..=batch.runs {
        if run > 0 {
            setup.prepare_again(&batch.first).await;
        }
        // Alternate which server goes first, so drift affects both alike.
        for sim_first in [run % 2 == 0, run % 2 == 1] {
            if !sim_first {
                let (t, status, reply) = raw_post(http, bare_url, &batch.body).await;
                assert_eq!(status, 200, "bare: {}", String::from_utf8_lossy(&reply));
                let parsed: PlainReply = serde_json::from_slice(&reply).unwrap();
                assert_eq!(parsed.data.len(), n);
                if batch.measured(run) {
                    side.bare_t.push(t);
                }
            } else if side.refused.is_none() {
                perf.enable();
                let (t, status, reply) = raw_post(http, sim_url, &batch.body).await;
                perf.disable();
                assert!(matches!(status, 200 | 299), "simulator: HTTP {status}");
                let parsed: PlainReply = serde_json::from_slice(&reply).unwrap();
                if parsed.code != 0 {
                    eprintln!(
                        "{n} orders: the simulator refused the batch: {}",
                        parsed.message
                    );
                    side.refused = Some(parsed.message);
                    continue;
                }
                assert_eq!(parsed.data.len(), n, "one result per order");
                if batch.measured(run) {
                    side.sim_t.push(t);
                }
                side.captured = Some(reply);
            }
        }
    }
    side
}

/// Client side: the SDK's work on the batch and `reply` against serialize + parse of the
/// same (`floor_too`), `runs` measured runs after one warm-up run.
async fn client_side(
    http: &reqwest::Client,
    sim_url: &str,
    batch: &Batch,
    reply: &Bytes,
    runs: usize,
    floor_too: bool,
    perf: &mut Perf,
) -> ClientSide {
    let (n, req, payload) = (batch.n, &batch.req, batch.body.len());
    let mut side = ClientSide::default();
    for run in 0..=runs {
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
                let items = client::sdk_client_side(http, sim_url, ours, reply).await;
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
                let plain: PlainReply = serde_json::from_slice(reply).unwrap();
                floor = t.elapsed().as_secs_f64() * 1e6;
                assert_eq!((sent, plain.data.len()), (payload, n));
            }
        }
        // The warm-up is the batch's own (its `measured`), as for the other parts.
        if batch.measured(run) {
            side.floor_t.push(floor);
            side.sdk_t.push(sdk);
            side.peaks.push(peak as f64);
        }
    }
    side
}

/// Round trip: SDK → simulator → SDK, against serialize + parse of the request; above
/// 1,000 orders each measured run between round trips of `linear` (the 1,000-order
/// batch), so both sizes see the same machine.
async fn round_trip(
    setup: &Setup,
    batch: &Batch,
    refused: bool,
    linear: Option<&((o::EnterpriseCustomer, Vec<String>), o::BatchOrderRequest)>,
    perf: &mut Perf,
) -> RoundTrip {
    let (n, req) = (batch.n, &batch.req);
    let mut side = RoundTrip::default();
    for run in 0..=batch.runs {
        let t = Instant::now();
        let bytes = serde_json::to_vec(req).unwrap();
        let parsed: o::BatchOrderRequest = serde_json::from_slice(&bytes).unwrap();
        let floor = t.elapsed().as_secs_f64() * 1e6;
        assert_eq!(parsed.order_list.len(), n);
        drop((bytes, parsed));
        if batch.measured(run) {
            side.floor.push(floor);
        }
        if refused {
            continue; // the floor only: the simulator takes no batch of this size
        }
        // Linearity compares this size with 1,000 orders. Each measured run sits
        // between runs of 1,000 orders, so both sizes see the same machine: its speed
        // drifts by more than the target's margin within a minute.
        let flank = linear.filter(|_| n > 1_000 && batch.measured(run));
        if let Some(small) = flank
            && side.small_t.is_empty()
        {
            side.small_t
                .extend(setup.round_trips(small, FLANK_RUNS).await);
        }
        let (elapsed, peak) = setup.round_trip(&batch.first, req, Some(perf)).await;
        if batch.measured(run) {
            side.t.push(elapsed);
            side.peaks.push(peak as f64);
        }
        if let Some(small) = flank {
            side.small_t
                .extend(setup.round_trips(small, FLANK_RUNS).await);
        }
    }
    side
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
