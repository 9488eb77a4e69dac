//! Paging at scale: `list_members().stream()` over every employee of an enterprise with
//! 10,000 and 100,000 employees, counting the items without keeping them. Reported: the
//! time per item and the client's peak heap during the whole stream, which stays flat
//! when the stream holds one page at a time rather than collecting.
//!
//! One enterprise per size is made through the simulator's admin API (`POST
//! /__sandbox/v1/seed`, which adds the employees with the member center's own
//! `addMembers`, 100 at a time, in the simulator's process), all in one seed after a
//! reset, so every stream meets the same state. The simulator runs in its own process
//! (`LICENSING_SIM_URL`, started by `cargo xtask bench` with a trial member limit of
//! 100,000). After one unmeasured stream of each size, [`ROUNDS`] rounds each stream the
//! smallest enterprise [`FLANK`] times and every larger one once, so the sizes meet the
//! machine as it is then (a 10,000-item stream takes some 25 ms, in which a shared machine
//! drifts by more than the target's margin); times are the medians of their streams.
//! Prints one JSON object. Without `--bench` (under `cargo test`) it streams 250
//! employees in pages of 100 from an in-process simulator once and only checks the items.

mod common;

use std::time::Instant;

use common::{Counting, Heap, Mode, Sim, median, raw_client};
use futures_util::StreamExt as _;
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SIZES: [usize; 2] = [10_000, 100_000];
const SMOKE_SIZES: [usize; 1] = [250];
/// The largest page the member center serves.
const PAGE_SIZE: u32 = 1000;
const SMOKE_PAGE_SIZE: u32 = 100;
/// Rounds of streams (see the module's documentation).
const ROUNDS: usize = 5;
/// Streams of the smallest size per round: as many pages as the largest size's one stream
/// (10 × 10 pages of 1,000 against 100), so that each side's peak heap is the largest over
/// as many pages. A page's own peak depends on how its body arrived (in one read or in
/// several, held while they are joined), so the more pages a side is given, the higher
/// its largest: with 3 streams against one (30 pages against 100) the larger size read
/// 1.00 to 1.26 of the smaller from one run to the next while neither held more than a
/// page.
const FLANK: usize = SIZES[1] / SIZES[0];

/// An enterprise with `n` employees (`e{k}n1`, `e{k}n2`, …), the `k`th of the seed.
fn enterprise(k: usize, n: usize) -> Value {
    let members: Vec<Value> = (1..=n)
        .map(|i| json!({"userName": format!("e{k}n{i}"), "password": format!("Pass-{i:06}"), "name": format!("Employee {i}")}))
        .collect();
    json!({
        "name": format!("Paging Bench {k}"), "crmCustomerId": format!("CRM-PAGING-{k}"), "members": members,
    })
}

fn main() {
    let mode = Mode::from_args();
    let out = mode.runtime().block_on(run(mode));
    println!("{out}");
}

/// One whole stream of the enterprise's `n` employees: the time per item in µs and the
/// client's peak heap growth.
async fn stream_all(
    client: &licensing_sdk::member::Client,
    enterprise: &str,
    page_size: u32,
    n: usize,
) -> (f64, usize) {
    let heap = Heap::start();
    let t = Instant::now();
    let mut stream = client
        .list_members()
        .enterprise_global_id(enterprise)
        .page_size(page_size)
        .stream();
    let (mut count, mut last_id) = (0usize, 0i64);
    while let Some(item) = stream.next().await {
        let item = item.unwrap();
        // Oldest first, each employee once.
        let id: i64 = item.id.parse().unwrap();
        assert!(id > last_id, "ids increase: {id} after {last_id}");
        last_id = id;
        count += 1;
    }
    drop(stream);
    let elapsed = t.elapsed().as_secs_f64() * 1e6;
    // The two employees every enterprise starts with, and the seeded ones.
    assert_eq!(count, n + 2, "every employee once");
    (elapsed / count as f64, heap.peak())
}

async fn run(mode: Mode) -> Value {
    let (sizes, page_size, rounds) = match mode {
        Mode::Bench => (&SIZES[..], PAGE_SIZE, ROUNDS),
        Mode::Smoke => (&SMOKE_SIZES[..], SMOKE_PAGE_SIZE, 1),
    };
    let sim = Sim::get(mode, 1000).await;
    let http = raw_client();
    let client = licensing_sdk::member::Client::builder(&sim.url)
        .client_token(licensing_sim::DEFAULT_CLIENT_TOKEN)
        .user_token(licensing_sim::DEFAULT_USER_TOKEN)
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .unwrap();
    sim.reset(&http).await;
    let t = Instant::now();
    let seeded = sim
        .seed(
            &http,
            &json!({"enterprises": sizes.iter().enumerate().map(|(k, &n)| enterprise(k, n)).collect::<Vec<_>>()}),
        )
        .await;
    let seed_s = t.elapsed().as_secs_f64();
    let mut enterprises = Vec::new();
    for k in 0..sizes.len() {
        let id = seeded["enterprises"][k]["enterpriseGlobalId"]
            .as_str()
            .expect("the seeded enterprise's id")
            .to_string();
        // One page as it travels, for scale.
        let page = http
            .get(format!(
                "{}{}?pageNum=1&pageSize={page_size}&g_nonce={}",
                sim.url,
                licensing_sdk::operations::LIST_MEMBERS.path_with(&[&id]),
                licensing_sdk::runtime::nonce()
            ))
            .header(
                "authorization",
                format!("Bearer {}", licensing_sim::DEFAULT_CLIENT_TOKEN),
            )
            .header("clientToken", licensing_sim::DEFAULT_CLIENT_TOKEN)
            .header("userToken", licensing_sim::DEFAULT_USER_TOKEN)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        enterprises.push((id, page.len()));
    }
    // `PAGING_PROFILE=N`: only streams of the N-employee enterprise (a few hundred
    // thousand items in all), so a profiler (`perf record`) sees one size alone.
    if let Some(n) = std::env::var("PAGING_PROFILE")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        let k = sizes
            .iter()
            .position(|&s| s == n)
            .unwrap_or_else(|| panic!("PAGING_PROFILE: no enterprise of {n} employees"));
        let mut times = Vec::new();
        for _ in 0..(300_000 / n).max(1) {
            times.push(stream_all(&client, &enterprises[k].0, page_size, n).await.0);
        }
        return json!({"profiled": n, "us_per_item": median(times)});
    }
    if mode == Mode::Bench {
        for (&n, (id, _)) in sizes.iter().zip(&enterprises) {
            stream_all(&client, id, page_size, n).await;
        }
    }
    let mut times = vec![Vec::new(); sizes.len()];
    let mut peaks = vec![Vec::new(); sizes.len()];
    for _ in 0..rounds {
        for (k, (&n, (id, _))) in sizes.iter().zip(&enterprises).enumerate() {
            let streams = if k == 0 && sizes.len() > 1 { FLANK } else { 1 };
            for _ in 0..streams {
                let (per_item, peak) = stream_all(&client, id, page_size, n).await;
                times[k].push(per_item);
                peaks[k].push(peak as f64);
            }
        }
    }
    let mut results = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let row = json!({
            "employees": n, "items": n + 2, "page_size": page_size, "runs": times[k].len(),
            "page_bytes": enterprises[k].1, "seed_s": seed_s,
            "us_per_item": median(times[k].clone()),
            "peak_bytes": peaks[k].iter().copied().fold(f64::NAN, f64::max),
            // Every stream's, in the order run: `streams_per_round` a round, for the spread.
            "runs_us_per_item": times[k], "runs_peak_bytes": peaks[k],
            "streams_per_round": times[k].len() / rounds.max(1),
        });
        eprintln!("{row}");
        results.push(row);
    }
    sim.reset(&http).await;
    json!({"sizes": results})
}
