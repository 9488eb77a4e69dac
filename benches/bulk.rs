//! Bulk order submission on the SDK called directly: the job `licensing orders submit`
//! does, written as a partner would write it on the SDK, for `cargo xtask bench` to
//! compare with the command line on the same file, against the same simulator.
//!
//! `bulk FILE --batch-size N --concurrency N --channel-code CODE --app-key KEY` reads FILE
//! (JSON Lines, one `LicenseOrder` per line, the spec's field names), sends it as
//! `batchOrder` batches of N orders, at most `--concurrency` in flight, each batch a task
//! of its own (as the command line runs them), and prints
//! `{"orders":…,"ok":…,"failed":…}`. The client comes from the environment
//! (`order::Client::from_env`: `LICENSING_ORDER_URL`, `LICENSING_APP_TOKEN`, …), which is
//! how the command line is configured too. The command line does more than this: it
//! checks every line on its own, reads CSV as well, and writes a results file; it also
//! reads the file while sending, where this program reads it first, as a short program
//! on the SDK would.
//!
//! Without FILE (under `cargo test`) it checks itself against an in-process simulator:
//! orders for freshly allocated asset numbers, in several batches, each applied once.

use std::sync::Arc;

use futures_util::{StreamExt as _, stream::FuturesUnordered};
use licensing_sdk::{
    SyncMode,
    order::{
        self,
        types::{BatchOrderRequest, LicenseOrder},
    },
};

/// What one run did, as printed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    orders: usize,
    ok: usize,
    failed: usize,
}

struct Settings {
    batch_size: usize,
    concurrency: usize,
    channel_code: String,
    app_key: String,
    /// Prefix of each batch's `channelOrderId`, which ends with its first and last line.
    prefix: String,
}

/// Reads the orders of a JSON Lines file, with their line numbers.
fn read(path: &std::path::Path) -> Vec<(usize, LicenseOrder)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let order = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: not an order: {e}", path.display(), i + 1));
            (i + 1, order)
        })
        .collect()
}

/// Sends the orders in batches, `concurrency` at a time.
async fn submit(
    client: &order::Client,
    settings: &Settings,
    orders: Vec<(usize, LicenseOrder)>,
) -> Tally {
    let mut tally = Tally {
        orders: orders.len(),
        ..Tally::default()
    };
    let client = Arc::new(client.clone());
    let mut pending = orders.into_iter().peekable();
    let mut in_flight = FuturesUnordered::new();
    loop {
        while in_flight.len() < settings.concurrency && pending.peek().is_some() {
            let chunk: Vec<_> = pending.by_ref().take(settings.batch_size).collect();
            let request = BatchOrderRequest {
                channel_code: settings.channel_code.clone(),
                channel_order_id: format!(
                    "{}-{}-{}",
                    settings.prefix,
                    chunk[0].0,
                    chunk[chunk.len() - 1].0
                ),
                sync_mode: SyncMode::Sync,
                order_list: chunk.into_iter().map(|(_, o)| o).collect(),
            };
            let (client, app_key, n) = (
                client.clone(),
                settings.app_key.clone(),
                request.order_list.len(),
            );
            in_flight.push(tokio::spawn(async move {
                let result = client.batch_order().app_key(app_key).body(request).await;
                (n, result)
            }));
        }
        let Some(done) = in_flight.next().await else {
            break;
        };
        let (n, result) = done.expect("a batch task does not panic");
        match result {
            Ok(items) if items.len() == n => tally.ok += n,
            Ok(items) => panic!("a batch of {n} orders answered {} results", items.len()),
            Err(e) => {
                eprintln!("a batch of {n} orders failed: {e}");
                tally.failed += n;
            }
        }
    }
    tally
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    let mut settings = Settings {
        batch_size: 500,
        concurrency: 4,
        channel_code: "CH01".into(),
        app_key: "APP_KEY".into(),
        prefix: "sdk".into(),
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = |name: &str| {
            rest.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
                .clone()
        };
        match arg.as_str() {
            "--bench" => {}
            "--batch-size" => settings.batch_size = value(arg).parse().expect("--batch-size"),
            "--concurrency" => settings.concurrency = value(arg).parse().expect("--concurrency"),
            "--channel-code" => settings.channel_code = value(arg),
            "--app-key" => settings.app_key = value(arg),
            "--order-id-prefix" => settings.prefix = value(arg),
            other if other.starts_with("--") => panic!("unknown option {other}"),
            path => file = Some(std::path::PathBuf::from(path)),
        }
    }
    assert!(
        settings.batch_size >= 1 && settings.concurrency >= 1,
        "--batch-size and --concurrency must be at least 1"
    );
    // The command line's runtime: tokio's multi-thread default.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match file {
        Some(file) => {
            let client =
                order::Client::from_env().expect("LICENSING_ORDER_URL and LICENSING_APP_TOKEN");
            let tally = runtime.block_on(submit(&client, &settings, read(&file)));
            println!(
                "{}",
                serde_json::json!({"orders": tally.orders, "ok": tally.ok, "failed": tally.failed})
            );
        }
        None => runtime.block_on(self_check()),
    }
}

/// 45 orders in batches of 10, three at a time, against an in-process simulator: every
/// order applied once, under the batch the file's lines put it in.
async fn self_check() {
    let seed = licensing_sim::admin::builtin_seed("demo").expect("the demo seed");
    let sim = licensing_sim::Simulator::builder()
        .seed(seed)
        .start()
        .await
        .expect("the in-process simulator starts");
    let client = order::Client::builder(&sim.url())
        .application_token(licensing_sim::DEFAULT_APP_TOKEN)
        .build()
        .expect("a client");
    let numbers = client
        .allocate_shell_nums()
        .body(order::types::AllocateShellNumsRequest::builder().size(45u32))
        .await
        .expect("asset numbers");
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    let path = file.path();
    let numbers: Vec<String> = numbers.iter().map(ToString::to_string).collect();
    licensing_test_support::orders::write(path, &numbers).expect("the orders file");
    let settings = Settings {
        batch_size: 10,
        concurrency: 3,
        channel_code: "CH01".into(),
        app_key: "APP_KEY".into(),
        prefix: "check".into(),
    };
    let orders = read(path);
    drop(file);
    let tally = submit(&client, &settings, orders).await;
    assert_eq!(
        tally,
        Tally {
            orders: 45,
            ok: 45,
            failed: 0
        }
    );
    // Each order applied once, under the batch its line put it in: its asset holds one
    // product, which the batch named by the line's number gave it.
    let state = sim.export_state();
    for (i, number) in numbers.iter().enumerate() {
        let first = i / 10 * 10 + 1;
        let batch = format!("check-{first}-{}", (first + 9).min(45));
        let products = &state["state"]["assets"][number.to_string()]["products"];
        let origins: Vec<&serde_json::Value> = products
            .as_array()
            .unwrap_or_else(|| panic!("asset {number} in the state: {products}"))
            .iter()
            .map(|p| &p["origin"]["channelOrderId"])
            .collect();
        assert_eq!(origins, [&serde_json::json!(batch)], "asset {number}");
    }
    println!("bulk self-check: 45 orders in 5 batches, each applied once");
}
