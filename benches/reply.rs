//! A hostile reply: `listVirtualAssets` answering 60 MB (under the default 64 MiB bound on
//! the wire) whose `assetLimits`, a field whose shape the documents do not show, holds 30
//! million small numbers. Reported: the client's peak heap during the call over the
//! reply's size (target ≤ 3×). The server is a thread of this process writing a body made
//! before the measurement starts, so only the client's growth counts. Prints one JSON
//! object. Without `--bench` (under `cargo test`) the reply is 4 MB and only the bound
//! (three times the reply plus what `MAX_OPAQUE_VALUES` allows) is checked.

mod common;

use std::sync::Arc;

use common::{Counting, Heap, Mode};
use licensing_test_support::{raw::RawServer, replies::assets_with_limits};
use serde_json::json;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `1,` per value: 60 MB at full size, 4 MB in the smoke run.
const VALUES: usize = 30_000_000;
const SMOKE_VALUES: usize = 2_000_000;

fn main() {
    let mode = Mode::from_args();
    let values = match mode {
        Mode::Bench => VALUES,
        Mode::Smoke => SMOKE_VALUES,
    };
    let body = Arc::new(assets_with_limits(values));
    let bytes = body.len();
    let url = RawServer::json(body).url;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Three calls, for the spread of the peak (how much the body's reads in chunks move it).
    let calls = match mode {
        Mode::Bench => 3,
        Mode::Smoke => 1,
    };
    let (outcome, peaks) = rt.block_on(async {
        let client = licensing_sdk::order::Client::builder(&url)
            .application_token("app-token")
            .retry(licensing_sdk::RetryPolicy::Never)
            .build()
            .unwrap();
        let mut outcomes = Vec::new();
        let mut peaks = Vec::new();
        for _ in 0..calls {
            let heap = Heap::start();
            let result = client
                .list_virtual_assets()
                .enterprise_global_id("EG-7f3a")
                .await;
            peaks.push(heap.peak());
            outcomes.push(match result {
                Ok(assets) => format!("decoded {} asset(s)", assets.len()),
                Err(e) => e.kind_name(),
            });
        }
        outcomes.dedup();
        assert_eq!(
            outcomes.len(),
            1,
            "the calls ended differently: {outcomes:?}"
        );
        (outcomes.remove(0), peaks)
    });
    let peak = peaks.iter().copied().max().unwrap_or_default();
    let ratio = peak as f64 / bytes as f64;
    // The bound's values are a fixed allowance beside the reply's three times: at full
    // size (not at the smoke run's) they fit within the three times too, which the report
    // checks.
    let allowance = licensing_sdk::MAX_OPAQUE_VALUES * 64 + 4 * 1024 * 1024;
    assert!(
        peak <= 3 * bytes + allowance,
        "peak heap {peak} bytes for {bytes} ({ratio:.2}x)"
    );
    println!(
        "{}",
        json!({
            "values": values, "reply_bytes": bytes, "peak_bytes": peak, "ratio": ratio,
            "outcome": outcome, "runs_peak_bytes": peaks,
        })
    );
}
