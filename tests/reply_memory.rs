//! Memory bounded by the reply's size, whatever the JSON: a `listVirtualAssets` reply whose
//! `assetLimits` (a field whose shape the documents do not show) holds millions of small
//! numbers, served over loopback, measured by a counting allocator. Its own binary: the
//! allocator counts the whole process, so nothing else may run beside it.

use std::sync::Arc;

use licensing_sdk::{Error, MAX_OPAQUE_VALUES, RetryPolicy, order};
use licensing_test_support::{
    heap::{Counting, Heap},
    raw::RawServer,
    replies::assets_with_limits,
};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What a call may hold besides three times the reply: the values
/// [`MAX_OPAQUE_VALUES`] allows (a `serde_json::Value` and its slot in a growing array, 64
/// bytes at most) and the client's fixed costs.
const ALLOWANCE: usize = MAX_OPAQUE_VALUES * 64 + 4 * 1024 * 1024;

/// One call's result and the client's peak heap growth during it.
async fn call(url: &str) -> (Result<Vec<order::types::VirtualAsset>, Error>, usize) {
    let client = order::Client::builder(url)
        .application_token("app-token")
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let heap = Heap::start();
    let result = client
        .list_virtual_assets()
        .enterprise_global_id("EG-7f3a")
        .await;
    (result, heap.peak())
}

/// The call answered with a reply of `values` values (`what` happened to it, for the
/// log): its result, the peak heap and the reply's length.
async fn measured(
    what: &str,
    values: usize,
) -> (Result<Vec<order::types::VirtualAsset>, Error>, usize, usize) {
    let body = Arc::new(assets_with_limits(values));
    let bytes = body.len();
    let url = RawServer::json(body).url;
    let (result, peak) = call(&url).await;
    eprintln!(
        "{what}: reply {bytes} bytes, peak heap {peak} bytes ({:.2}x)",
        peak as f64 / bytes as f64
    );
    (result, peak, bytes)
}

#[tokio::test(flavor = "current_thread")]
async fn peak_memory_is_bounded_by_the_reply_whatever_its_json() {
    // 16 MiB of `1,`: 8 million values, 256 MiB and more as `serde_json::Value`s.
    let (result, peak, bytes) = measured("refused", 8 * 1024 * 1024).await;
    assert!(
        peak <= 3 * bytes + ALLOWANCE,
        "peak heap {peak} bytes for a reply of {bytes} bytes ({:.2}x)",
        peak as f64 / bytes as f64
    );
    match &result {
        Err(Error::Decode { reason, .. }) => {
            assert!(reason.contains("`assetLimits`"), "{reason}");
            assert!(reason.contains("MAX_OPAQUE_VALUES"), "{reason}");
        }
        Err(other) => panic!("expected the bound's decode error, got {other}"),
        // Not printed: millions of values.
        Ok(assets) => panic!("decoded {} assets past the bound", assets.len()),
    }

    // Within the bound, the values are all there, and cost what the bound allows.
    let (result, peak, bytes) = measured("decoded", MAX_OPAQUE_VALUES / 2).await;
    let assets = result.expect("within the bound");
    assert_eq!(
        assets[0].asset_limits.as_ref().map(Vec::len),
        Some(MAX_OPAQUE_VALUES / 2)
    );
    assert!(
        peak <= 3 * bytes + ALLOWANCE,
        "peak heap {peak} bytes for a reply of {bytes} bytes"
    );
}
