//! `submitOrders`: license orders in bulk, as one tool on the exactly-once path of
//! `licensing orders submit`. The orders are written to a file named by their digest (with
//! the channel code and sync mode), and the command's run sends them with its results
//! file as a write-ahead log; the same call again (a client's retry, or a new session)
//! resumes that file, so that an order already sent is never sent again, and one whose
//! answer was lost stays `unknown` rather than being resent.
//!
//! Its schema is `batchOrder`'s: the orders are the items of that request's `orderList`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::{
    args::Invalid,
    catalogue::{Hints, Target, ToolDef},
};
use crate::{config::Context, error::CliError, output::Format};

/// The tool's name.
pub const NAME: &str = "submitOrders";

/// The most orders one call takes (the command line takes any number, from a file).
pub const MAX_ORDERS: usize = 10_000;

/// The folder of the orders and results files in the configuration directory.
pub const FOLDER: &str = "mcp-orders";

/// The bulk tool, from `batchOrder`'s: its request's `channelCode`, `syncMode` and the
/// items of `orderList`.
pub fn tool(batch: &ToolDef) -> Result<ToolDef, String> {
    let platform = batch
        .platform()
        .ok_or("batchOrder: not a platform operation")?;
    let defs = batch.input.get("$defs").cloned().unwrap_or_default();
    let request = platform.operation.request_type.map(str::to_string);
    let schema = defs
        .get(request.as_deref().unwrap_or(""))
        .or_else(|| defs.get("BatchOrderRequest"))
        .ok_or("batchOrder: its request schema is not among its $defs")?;
    let field = |name: &str| schema["properties"][name].clone();
    if field("orderList")["items"].is_null() {
        return Err("batchOrder: the request has no orderList items".into());
    }
    let mut orders = field("orderList");
    if let Value::Object(o) = &mut orders {
        o.insert("minItems".into(), 1.into());
        o.insert("maxItems".into(), MAX_ORDERS.into());
        o.insert(
            "description".into(),
            "The orders, sent in batches of 500; each is applied at most once, whatever \
             stops the run or however often the call is repeated."
                .into(),
        );
    }
    let mut input = Map::new();
    input.insert("type".into(), "object".into());
    input.insert(
        "properties".into(),
        json!({"channelCode": field("channelCode"), "syncMode": field("syncMode"), "orders": orders}),
    );
    input.insert("required".into(), json!(["channelCode", "orders"]));
    input.insert("additionalProperties".into(), false.into());
    input.insert("$defs".into(), defs);
    let text = json!({"type": "string"});
    let mut output = batch.output.clone();
    output.insert(
        "properties".into(),
        json!({
            "data": {"type": "object", "properties": {
                "results": {"type": "array", "items": {"type": "object"}},
                "file": text,
            }},
            "error": batch.output["properties"]["error"],
            "omitted": batch.output["properties"]["omitted"],
            "note": text,
        }),
    );
    output.remove("$defs");
    Ok(ToolDef {
        name: NAME.to_string(),
        summary: "Submit license orders in bulk".to_string(),
        description: format!(
            "Submit license orders in bulk ({} in batches, each order applied at most once: \
             calling it again with the same orders sends only what was not sent). Changes \
             the platform's state: callable only when the server allows it (--allow-writes), \
             after a person confirms it. Each order's outcome: ok, failed (with the code), \
             invalid, unknown (sent without an answer: never resent) or not_sent.",
            batch.name
        ),
        input,
        output,
        // A repeat resumes: it applies nothing twice.
        hints: Hints {
            idempotent: true,
            ..batch.hints
        },
        params: Vec::new(),
        page_size: None,
        target: Target::Orders(platform),
    })
}

/// One call's orders, checked.
#[derive(Debug)]
pub struct Orders {
    channel_code: String,
    sync_mode: String,
    /// One JSON line per order.
    lines: String,
}

/// The call's orders, or the argument at fault.
pub fn read(args: &Map<String, Value>) -> Result<Orders, Invalid> {
    if let Some(key) = args
        .keys()
        .find(|k| !matches!(k.as_str(), "channelCode" | "syncMode" | "orders"))
    {
        return Err(Invalid::new(
            key,
            "is not an argument of submitOrders, which takes channelCode, syncMode, orders",
        ));
    }
    let channel_code = match args.get("channelCode") {
        Some(Value::String(s)) if !s.trim().is_empty() && !s.contains(char::is_control) => {
            s.clone()
        }
        _ => return Err(Invalid::new("channelCode", "must be a channel code (text)")),
    };
    let sync_mode = match args.get("syncMode") {
        None => "sync".to_string(),
        Some(Value::String(s)) if s == "sync" || s == "async" => s.clone(),
        Some(_) => return Err(Invalid::new("syncMode", "must be sync or async")),
    };
    let orders = match args.get("orders") {
        Some(Value::Array(orders)) if !orders.is_empty() && orders.len() <= MAX_ORDERS => orders,
        _ => {
            return Err(Invalid::new(
                "orders",
                format!("must be a list of 1 to {MAX_ORDERS} orders"),
            ));
        }
    };
    let mut lines = String::new();
    for (i, order) in orders.iter().enumerate() {
        if !order.is_object() {
            return Err(Invalid::new(
                &format!("orders[{i}]"),
                "must be an order (an object)",
            ));
        }
        lines.push_str(&order.to_string());
        lines.push('\n');
    }
    Ok(Orders {
        channel_code,
        sync_mode,
        lines,
    })
}

/// Sends the orders (or resumes their earlier run) and answers each order's outcome,
/// in order: the results file's last record of each line.
pub async fn submit(ctx: &Context, dir: &Path, orders: &Orders) -> Result<Value, CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create {}: {e}", dir.display())))?;
    let digest = Sha256::digest(
        format!(
            "{}\n{}\n{}",
            orders.channel_code, orders.sync_mode, orders.lines
        )
        .as_bytes(),
    );
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    let file = dir.join(format!("orders-{hex}.jsonl"));
    let results = PathBuf::from(format!("{}.results.jsonl", file.display()));
    if !file.exists() {
        std::fs::write(&file, &orders.lines)
            .map_err(|e| CliError::usage(format!("cannot write {}: {e}", file.display())))?;
    }
    let file_arg = file.display().to_string();
    let results_arg = results.display().to_string();
    let mut argv = vec!["submit", file_arg.as_str()];
    if results.exists() {
        argv.extend(["--resume", results_arg.as_str()]);
    } else {
        argv.extend([
            "--channel-code",
            orders.channel_code.as_str(),
            "--sync-mode",
            orders.sync_mode.as_str(),
            "--order-id-prefix",
            hex.as_str(),
            "--results",
            results_arg.as_str(),
        ]);
    }
    let matches = crate::bulk::command()
        .try_get_matches_from(argv)
        .map_err(|e| CliError::usage(format!("orders submit: {e}")))?;
    let run = crate::bulk::run(ctx, &matches, Format::Json).await;
    // A failed or unknown line is an outcome, not a failure of the call.
    if let Err(e) = &run
        && e.code == crate::error::exit::USAGE
    {
        return Err(CliError::usage(e.message.clone()));
    }
    let text = std::fs::read_to_string(&results)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", results.display())))?;
    let mut last: std::collections::BTreeMap<u64, Value> = Default::default();
    for record in text.lines().skip(1) {
        if let Ok(record) = serde_json::from_str::<Value>(record)
            && let Some(line) = record["line"].as_u64()
        {
            last.insert(line, record);
        }
    }
    Ok(json!({"results": last.into_values().collect::<Vec<_>>(), "file": results_arg}))
}
