//! `licensing-bench render` on a committed record (`fixtures/results.json`, a full run's
//! shape with every section, a refused batch size and an oha answer refused): the
//! document's sections, its rows in the run's order, the summary agreeing with the rows,
//! the chart, and the record's own targets.

use std::path::{Path, PathBuf};
use std::process::Command;

use licensing_bench::render::{PARTNER_BEGIN, PARTNER_END};
use licensing_bench::results::Results;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results.json")
}

/// `licensing-bench render RECORD --output DIR/BENCHMARKS.md --chart DIR/chart.svg`, the
/// document it wrote.
fn render(record: &Path, dir: &Path) -> String {
    let output = dir.join("BENCHMARKS.md");
    let out = Command::new(env!("CARGO_BIN_EXE_licensing-bench"))
        .arg("render")
        .arg(record)
        .arg("--output")
        .arg(&output)
        .arg("--chart")
        .arg(dir.join("chart.svg"))
        .output()
        .expect("the lab runs");
    assert!(
        out.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(output).expect("the document")
}

/// The main table's rows: `what` and `target` columns.
fn rows(document: &str) -> Vec<(String, String)> {
    document
        .lines()
        .skip_while(|l| !l.starts_with("| what | baseline |"))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            (cells[0].to_string(), cells[4].to_string())
        })
        .collect()
}

#[test]
fn a_full_record_renders_the_whole_document() {
    let dir = tempfile::tempdir().unwrap();
    // The document it replaces holds the partner build's section, which is kept.
    let partner =
        format!("{PARTNER_BEGIN}\n## A partner's first build\n\n| hello world on |\n{PARTNER_END}");
    std::fs::write(
        dir.path().join("BENCHMARKS.md"),
        format!("# Old\n\n{partner}\n"),
    )
    .unwrap();
    let document = render(&fixture(), dir.path());

    let headings: Vec<&str> = document.lines().filter(|l| l.starts_with('#')).collect();
    let sections: Vec<&str> = headings
        .iter()
        .copied()
        .filter(|h| !h.starts_with("###"))
        .collect();
    assert_eq!(
        sections,
        [
            "# Benchmarks",
            "## Throughput by two load generators",
            "## What the missed targets leave, by profile",
            "## A partner's first build",
        ]
    );
    assert!(document.contains("at commit `6545f30` on a 2-core machine"));
    assert!(document.contains("Machine: AMD EPYC, 2 cores available, 24 GiB, Linux 6.18.44"));
    assert!(
        document.ends_with(&format!("{partner}\n")),
        "the partner section last, whole"
    );
    assert!(!document.contains("# Old"));

    // Every section's rows, in the run's order.
    let rows = rows(&document);
    let order = [
        ("SDK overhead, ", 8),
        ("simulator throughput, ", 10),
        ("batchOrder client side, ", 4),
        ("batchOrder simulator side, ", 4),
        ("batchOrder round trip, ", 8),
        ("batchOrder linearity", 1),
        ("`list_members().stream()`", 2),
        ("paging ", 2),
        ("listVirtualAssets reply", 1),
        ("bulk submit", 1),
        ("conformance proxy", 12),
        ("seed of ", 4),
        ("build.rs generation", 1),
        ("rebuild after touching", 1),
        ("clean build of the crate", 1),
    ];
    let mut at = 0;
    for (prefix, count) in order {
        let got = rows[at..]
            .iter()
            .take_while(|(what, _)| what.starts_with(prefix))
            .count();
        assert_eq!(got, count, "rows starting {prefix:?} at row {at}");
        at += got;
    }
    assert_eq!(at, rows.len(), "no other rows");

    // The summary counts what the rows say, and lists each miss.
    let met = rows.iter().filter(|(_, t)| t.ends_with(": met")).count();
    let missed: Vec<&(String, String)> = rows
        .iter()
        .filter(|(_, t)| t.ends_with("**missed**"))
        .collect();
    assert_eq!((met, missed.len()), (31, 10));
    assert!(document.contains("Targets: 31 met, 10 missed:\n"));
    for (what, _) in missed {
        assert!(
            document.contains(&format!("\n- {what} (")),
            "{what} in the summary"
        );
    }
    // The refused size and the refused oha answers say so.
    assert!(document.contains("The simulator refused the 50,000-order batch"));
    assert!(document.contains(
        "**Not every answer licensing-sim gave oha was HTTP 200**: 3.0 of 81000.0 write answers"
    ));

    let chart = std::fs::read_to_string(dir.path().join("chart.svg")).unwrap();
    for label in [
        "batchOrder cost by number of orders",
        "round trip: SDK → simulator → SDK",
        "time in the simulator (HTTP, one connection)",
        "client side: the SDK&apos;s own work",
        "floor: serde_json serialize + parse of the request",
    ] {
        assert!(chart.contains(label), "{label} in the chart");
    }
}

#[test]
fn the_targets_are_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    // The hostile reply's peak is 2.25× its size: met at ≤ 3×, missed at ≤ 2×.
    let reply = record["targets"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["key"] == "reply.heap")
        .unwrap();
    reply["limit"] = 2.0.into();
    reply["shown"] = "≤ 2× reply".into();
    let path = dir.path().join("results.json");
    std::fs::write(&path, record.to_string()).unwrap();
    let document = render(&path, dir.path());
    assert!(document.contains("Targets: 30 met, 11 missed:\n"));
    let (_, target) = rows(&document)
        .into_iter()
        .find(|(what, _)| what.starts_with("listVirtualAssets"))
        .unwrap();
    assert_eq!(target, "≤ 2× reply: **missed**");
}

#[test]
fn a_partial_record_renders_its_report_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    record["run"]["only"] = serde_json::json!(["seed"]);
    let sections = record["sections"].as_object_mut().unwrap();
    sections.retain(|name, _| name == "seed");
    let path = dir.path().join("results-only.json");
    std::fs::write(&path, record.to_string()).unwrap();
    let document = render(&path, dir.path());
    let rows = rows(&document);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|(what, _)| what.starts_with("seed of ")));
    assert!(!document.contains("## What the missed targets leave"));
    assert!(!document.contains(PARTNER_BEGIN));
    assert!(!dir.path().join("chart.svg").exists(), "no batch, no chart");
}

#[test]
fn a_record_of_another_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    record["format"] = 2.into();
    let path = dir.path().join("results.json");
    std::fs::write(&path, record.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_licensing-bench"))
        .args(["render"])
        .arg(&path)
        .arg("--output")
        .arg(dir.path().join("out.md"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains("a record of format 2, this lab reads format 1"),
        "{error}"
    );
    assert!(!dir.path().join("out.md").exists());
}

/// The report of the committed record, reviewed: every row's figures and every note as
/// the document prints them.
#[test]
fn the_report_of_the_fixture() {
    let results = Results::read(&fixture()).unwrap();
    let report = licensing_bench::render::report(&results).unwrap();
    insta::assert_snapshot!(report);
}
