//! `orders submit`: 10,000 orders with a failing batch, a batch whose answer is lost,
//! an interruption and a resume; a CSV file; the progress bar in a pseudo-terminal.

use std::{
    collections::{BTreeMap, BTreeSet},
    io::Read as _,
    path::Path,
    time::{Duration, Instant},
};

use licensing_sdk::order;
use serde_json::{Value, json};

use crate::{Sim, stderr};

/// `orders submit` of `text`, written to `name`, for channel CH01 with the app key `K`:
/// its results, once it has exited with 1 (lines left invalid).
fn submitted_with_invalid(sim: &Sim, name: &str, text: String) -> Vec<Value> {
    let file = sim.path(name);
    std::fs::write(&file, text).unwrap();
    let output = sim
        .cmd()
        .args(["orders", "submit"])
        .arg(&file)
        .args(["--channel-code", "CH01", "--app-key", "K"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    results(&sim.path(&format!("{name}.results.jsonl")))
}

/// `n` newly allocated asset numbers.
pub fn numbers(sim: &Sim, n: usize) -> Vec<String> {
    let client = order::Client::builder(&sim.sim.url())
        .application_token(licensing_sim::DEFAULT_APP_TOKEN)
        .build()
        .unwrap();
    let mut out = Vec::new();
    while out.len() < n {
        let size = (n - out.len()).min(1000) as u32;
        let got = sim
            .rt
            .block_on(std::future::IntoFuture::into_future(
                client
                    .allocate_shell_nums()
                    .body(order::types::AllocateShellNumsRequest::builder().size(size)),
            ))
            .unwrap();
        out.extend(got.into_iter().map(|n| n.to_string()));
    }
    out
}

/// A `new_buy` order of the demo seed's customer for one asset number.
pub use licensing_test_support::orders::new_buy as order;

/// A JSON Lines file of one `new_buy` order per asset number.
pub fn write_orders(path: &Path, numbers: &[String]) {
    licensing_test_support::orders::write(path, numbers).unwrap();
}

/// The records of a results file, its header (the run it belongs to) left out.
pub fn results(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert!(header["run"]["sha256"].is_string(), "{header}");
    lines.map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Adds a fault rule; its id.
pub fn fault(sim: &Sim, rule: Value) -> i64 {
    let spec: licensing_sim::admin::types::FaultRuleSpec = serde_json::from_value(rule).unwrap();
    let rule = sim
        .rt
        .block_on(sim.sim.admin().create_fault().body(spec).send())
        .unwrap()
        .into_inner();
    rule.id
}

#[test]
fn ten_thousand_orders_with_a_failed_batch_an_unknown_one_and_an_interruption() {
    let sim = Sim::start();
    let baseline = sim.orders().len();
    let file = sim.path("orders.jsonl");
    let results_path = sim.path("results.jsonl");
    let numbers = numbers(&sim, 10_000);
    write_orders(&file, &numbers);
    // One batch refused once (not applied), one applied but its answer lost, and every
    // batch slowed down so that Ctrl-C lands mid-run.
    fault(
        &sim,
        json!({"operation": "batchOrder", "times": 1,
               "bodyField": {"pointer": "/channelOrderId", "equals": "t-2001-2500"},
               "fault": {"kind": "code", "code": "500"}}),
    );
    fault(
        &sim,
        json!({"operation": "batchOrder", "times": 1,
               "bodyField": {"pointer": "/channelOrderId", "equals": "t-4001-4500"},
               "fault": {"kind": "dropConnection"}}),
    );
    let slow = fault(
        &sim,
        json!({"operation": "batchOrder", "fault": {"kind": "delay", "ms": 250}}),
    );
    let submit = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("licensing"));
        cmd.args(["orders", "submit"])
            .arg(&file)
            .args(["--channel-code", "CH01", "--app-key", "APP_KEY"])
            .args(["--order-id-prefix", "t", "--concurrency", "2"])
            .args(extra)
            .env("LICENSING_ORDER_URL", sim.sim.url())
            .env("LICENSING_APP_TOKEN", licensing_sim::DEFAULT_APP_TOKEN)
            .env("LICENSING_RETRY", "never")
            .env("LICENSING_CONFIG_DIR", sim.dir.path())
            .stderr(std::process::Stdio::piped());
        cmd
    };

    // First run: interrupted once some batches are through.
    let child = submit(&["--results", results_path.to_str().unwrap()])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::fs::read_to_string(&results_path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 1000
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no batch went through"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    crate::signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    // The command to continue is given whole, with the appKey's value left out.
    let hint = stderr(&output);
    assert!(
        hint.contains("--resume")
            && hint.contains("--app-key - ")
            && hint.contains("--concurrency 2"),
        "{hint}"
    );
    assert!(!hint.contains("APP_KEY"), "{hint}");
    let first = results(&results_path);
    let lines: BTreeSet<u64> = first.iter().map(|r| r["line"].as_u64().unwrap()).collect();
    assert_eq!(
        first.len(),
        10_000,
        "one record per line, even when interrupted"
    );
    assert_eq!(lines, (1..=10_000).collect());
    let not_sent = first.iter().filter(|r| r["outcome"] == "not_sent").count();
    assert!(not_sent > 0, "the interruption left batches unsent");
    let ok_first = first.iter().filter(|r| r["outcome"] == "ok").count();
    assert!(ok_first >= 1000);

    // Resumed (at full speed) until nothing is left to send.
    sim.rt
        .block_on(sim.sim.admin().delete_fault().id(slow).send())
        .unwrap();
    let mut runs = 0;
    let last = loop {
        runs += 1;
        assert!(runs <= 3, "still not done after {runs} resumes");
        let output = submit(&["--resume", results_path.to_str().unwrap()])
            .output()
            .unwrap();
        let records = results(&results_path);
        let pending = records
            .iter()
            .filter(|r| r["outcome"] == "failed" || r["outcome"] == "not_sent")
            .count();
        if pending == 0 {
            break (output, records);
        }
        // Lines still to send: 1 (a failure), or 3 when an unknown outcome is reported too.
        assert!(
            matches!(output.status.code(), Some(1 | 3)),
            "{}",
            stderr(&output)
        );
    };
    let (output, records) = last;
    // The lost answer leaves its batch unknown: exit 3, and how to reconcile it.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("t-4001-4500") && err.contains("--retry-unknown"),
        "{err}"
    );

    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for r in &records {
        *outcomes.entry(r["outcome"].as_str().unwrap()).or_default() += 1;
        assert!(
            seen.insert(r["line"].as_u64().unwrap()),
            "line {} twice",
            r["line"]
        );
    }
    assert_eq!(
        seen,
        (1..=10_000).collect(),
        "every line has exactly one outcome"
    );
    assert_eq!(outcomes, BTreeMap::from([("ok", 9_500), ("unknown", 500)]));
    for r in records.iter().filter(|r| r["outcome"] == "unknown") {
        assert_eq!(r["channelOrderId"], "t-4001-4500");
    }
    // The failed batch was refused once, then sent again and applied.
    let faults = sim
        .rt
        .block_on(sim.sim.admin().list_faults().send())
        .unwrap()
        .into_inner();
    assert!(faults.iter().all(|f| f.hits == 1), "{faults:?}");
    // No order applied twice: the simulator holds one license order per line (the unknown
    // batch was applied once, by the first run, and never resent).
    assert_eq!(sim.orders().len() - baseline, 10_000);
    let ids: BTreeSet<&str> = records
        .iter()
        .filter_map(|r| r["licenseOrderId"].as_str())
        .collect();
    assert_eq!(ids.len(), 9_500);
}

#[test]
fn csv_files_and_invalid_lines() {
    let sim = Sim::start();
    let numbers = numbers(&sim, 3);
    let orders: Vec<Value> = numbers.iter().map(|n| order(n)).collect();
    let fields: Vec<&str> = orders[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut writer = csv_text(&fields, &orders);
    // A line breaking a rule is reported, never sent, and does not hold back the others.
    writer.push_str(&writer.lines().nth(1).unwrap().replace("new_buy", "made_up"));
    writer.push('\n');
    // So is a record with a cell more than the header has.
    let extra = format!("{},\"x\"\n", writer.lines().nth(1).unwrap());
    writer.push_str(&extra);
    let records = submitted_with_invalid(&sim, "orders.csv", writer);
    let outcomes: Vec<(u64, &str)> = records
        .iter()
        .map(|r| (r["line"].as_u64().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (2, "ok"),
            (3, "ok"),
            (4, "ok"),
            (5, "invalid"),
            (6, "invalid")
        ]
    );
    assert_eq!(records[0]["assetNos"], json!([numbers[0]]));
    let message = records[3]["message"].as_str().unwrap();
    assert!(message.contains("made_up"), "{message}");
    let message = records[4]["message"].as_str().unwrap();
    assert!(message.starts_with("not a CSV record"), "{message}");
}

#[test]
fn json_lines_that_are_not_orders_name_their_fault() {
    let sim = Sim::start();
    let numbers = numbers(&sim, 2);
    let mut wrong_type = order(&numbers[1]);
    wrong_type["sequence"] = json!("first");
    let mut missing = order(&numbers[1]);
    missing.as_object_mut().unwrap().remove("customerId");
    let mut no_assets = order(&numbers[1]);
    no_assets["assets"] = json!([]);
    let text = [
        order(&numbers[0]).to_string(),
        "{\"orderType\": \"new_buy\",".to_string(),
        wrong_type.to_string(),
        missing.to_string(),
        no_assets.to_string(),
    ]
    .join("\n");
    let records = submitted_with_invalid(&sim, "orders.jsonl", text);
    let got: Vec<(u64, &str, &str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["line"].as_u64().unwrap(),
                r["outcome"].as_str().unwrap(),
                r["field"].as_str().unwrap_or(""),
                r["message"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!((got[0].0, got[0].1), (1, "ok"), "{got:?}");
    assert_eq!(
        (got[1].0, got[1].1, got[1].2),
        (2, "invalid", ""),
        "{got:?}"
    );
    assert!(got[1].3.starts_with("not valid JSON"), "{got:?}");
    assert_eq!(
        (got[2].0, got[2].1, got[2].2),
        (3, "invalid", "sequence"),
        "{got:?}"
    );
    assert!(got[2].3.contains("invalid type"), "{got:?}");
    assert_eq!(
        (got[3].0, got[3].1, got[3].2, got[3].3),
        (4, "invalid", "customerId", "is required"),
        "{got:?}"
    );
    assert_eq!(
        (got[4].0, got[4].1, got[4].2),
        (5, "invalid", "assets"),
        "{got:?}"
    );
    assert_eq!(got.len(), 5);
}

/// Orders as CSV: the spec's field names as the header, JSON in list cells.
fn csv_text(fields: &[&str], orders: &[Value]) -> String {
    let quote = |s: String| format!("\"{}\"", s.replace('"', "\"\""));
    let mut text = fields.join(",");
    text.push('\n');
    for order in orders {
        let cells: Vec<String> = fields
            .iter()
            .map(|f| match &order[*f] {
                Value::String(s) => quote(s.clone()),
                other => quote(other.to_string()),
            })
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text
}

#[cfg(unix)]
#[test]
fn the_progress_bar_is_drawn_on_a_terminal_only() {
    use rustix::{fs, pty};
    let sim = Sim::start();
    let numbers = numbers(&sim, 200);
    let file = sim.path("orders.jsonl");
    write_orders(&file, &numbers);
    fault(
        &sim,
        json!({"operation": "batchOrder", "fault": {"kind": "delay", "ms": 100}}),
    );
    // A pseudo-terminal, opened as openpty(3) does, through rustix's safe calls.
    let master = pty::openpt(pty::OpenptFlags::RDWR | pty::OpenptFlags::NOCTTY).unwrap();
    pty::grantpt(&master).unwrap();
    pty::unlockpt(&master).unwrap();
    let name = pty::ptsname(&master, Vec::new()).unwrap();
    let slave = fs::open(
        name.as_c_str(),
        fs::OFlags::RDWR | fs::OFlags::NOCTTY,
        fs::Mode::empty(),
    )
    .unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("licensing"))
        .args(["orders", "submit"])
        .arg(&file)
        .args([
            "--channel-code",
            "CH01",
            "--app-key",
            "K",
            "--batch-size",
            "10",
            "--concurrency",
            "1",
        ])
        .env("LICENSING_ORDER_URL", sim.sim.url())
        .env("LICENSING_APP_TOKEN", licensing_sim::DEFAULT_APP_TOKEN)
        .env("LICENSING_CONFIG_DIR", sim.dir.path())
        .stderr(std::process::Stdio::from(slave))
        .spawn()
        .unwrap();
    let reader = std::thread::spawn(move || {
        let mut terminal = std::fs::File::from(master);
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        // Reading ends with EIO once the child has exited and closed its side.
        while let Ok(n) = terminal.read(&mut buffer) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buffer[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let status = child.wait().unwrap();
    assert!(status.success());
    let drawn = reader.join().unwrap();
    assert!(drawn.contains("/200 orders"), "{drawn:?}");
    assert!(
        drawn.contains("0 failed") && drawn.contains("ETA"),
        "{drawn:?}"
    );
    assert!(drawn.contains("200 lines: 200 ok"), "{drawn:?}");
    // Off a terminal, only the summary.
    let output = sim
        .cmd()
        .args(["orders", "submit"])
        .arg(&file)
        .args(["--channel-code", "CH01", "--app-key", "K", "--resume"])
        .arg(sim.path("orders.jsonl.results.jsonl"))
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
}
