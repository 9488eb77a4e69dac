//! Paging at scale: `list_members().stream()` over every employee of an enterprise with
//! 10,000 and 100,000 employees, counting the items without keeping them. Reported: the
//! time per item and the client's peak heap during the whole stream, which stays flat
//! when the stream holds one page at a time rather than collecting.
//!
//! The enterprise is made through the simulator's admin API (`POST /__sandbox/v1/seed`,
//! which adds the employees with the member center's own `addMembers`, 100 at a time, in
//! the simulator's process), after a reset. The simulator runs in its own process
//! (`LICENSING_SIM_URL`, started by `cargo xtask bench` with a trial member limit of
//! 100,000). Times are medians of 3 runs (fewer when a size has taken 30 s already: at
//! least one is measured). Prints one JSON object. Without `--bench` (under `cargo test`)
//! it streams 250 employees in pages of 100 from an in-process simulator once and only
//! checks the items.

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
/// Measured runs per size; fewer when they take long (see [`BUDGET`]).
const RUNS: usize = 3;
/// Time after which no further run of a size starts: one run of a slow stream is
/// reported rather than the benchmark taking minutes.
const BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

/// An enterprise with `n` employees (`e1`, `e2`, …).
fn seed(n: usize) -> Value {
    let members: Vec<Value> = (1..=n)
        .map(|i| json!({"userName": format!("e{i}"), "password": format!("Pass-{i:06}"), "name": format!("Employee {i}")}))
        .collect();
    json!({"enterprises": [{
        "name": "Paging Bench", "crmCustomerId": "CRM-PAGING", "members": members,
    }]})
}

fn main() {
    let mode = Mode::from_args();
    let rt = match mode {
        Mode::Bench => tokio::runtime::Builder::new_current_thread(),
        Mode::Smoke => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
    .unwrap();
    let out = rt.block_on(run(mode));
    println!("{out}");
}

async fn run(mode: Mode) -> Value {
    let (sizes, page_size, runs) = match mode {
        Mode::Bench => (&SIZES[..], PAGE_SIZE, RUNS),
        Mode::Smoke => (&SMOKE_SIZES[..], SMOKE_PAGE_SIZE, 0),
    };
    let sim = Sim::get(mode, 1000).await;
    let http = raw_client();
    let client = licensing_sdk::member::Client::builder(&sim.url)
        .client_token(licensing_sim::DEFAULT_CLIENT_TOKEN)
        .user_token(licensing_sim::DEFAULT_USER_TOKEN)
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .unwrap();
    let mut results = Vec::new();
    for &n in sizes {
        sim.reset(&http).await;
        let t = Instant::now();
        let seeded = sim.seed(&http, &seed(n)).await;
        let seed_s = t.elapsed().as_secs_f64();
        let enterprise = seeded["enterprises"][0]["enterpriseGlobalId"]
            .as_str()
            .expect("the seeded enterprise's id")
            .to_string();
        // One page as it travels, for scale.
        let page = http
            .get(format!(
                "{}{}?pageNum=1&pageSize={page_size}&g_nonce={}",
                sim.url,
                licensing_sdk::operations::LIST_MEMBERS.path_with(&[&enterprise]),
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

        let (mut times, mut peaks, mut items) = (Vec::new(), Vec::new(), 0);
        let started = Instant::now();
        // No warm-up run: the seed and the page above have opened the connection and
        // touched every employee already.
        for run in 0..runs.max(1) {
            if run > 0 && started.elapsed() > BUDGET {
                break;
            }
            let heap = Heap::start();
            let t = Instant::now();
            let mut stream = client
                .list_members()
                .enterprise_global_id(&enterprise)
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
            let peak = heap.peak();
            // The two employees every enterprise starts with, and the seeded ones.
            assert_eq!(count, n + 2, "every employee once");
            items = count;
            times.push(elapsed / count as f64);
            peaks.push(peak as f64);
        }
        let row = json!({
            "employees": n, "items": items, "page_size": page_size, "runs": times.len(),
            "page_bytes": page.len(), "seed_s": seed_s,
            "us_per_item": median(times),
            "peak_bytes": peaks.into_iter().fold(f64::NAN, f64::max),
        });
        eprintln!("{row}");
        results.push(row);
    }
    sim.reset(&http).await;
    json!({"sizes": results})
}
