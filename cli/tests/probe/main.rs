//! `licensing probe` over real sockets: against an in-process simulator (its state export
//! and journal say what the probe changed and sent), a simulator made to depart by fault
//! rules, runs stopped by every signal at every point, and hostile upstreams.

#[path = "../common/licensing.rs"]
mod common;
mod hostile;
#[cfg(unix)]
mod kill;
#[cfg(target_os = "linux")]
mod memory;
mod runs;
#[path = "../common/sim.rs"]
mod sim;

use std::{path::PathBuf, process::Stdio};

use licensing_sim::{Simulator, admin};
use serde_json::{Value, json};
pub use sim::Sim;

/// A demo-seeded simulator whose clock stands still (so that a write set back leaves the
/// times as they were), on a runtime of its own, and a directory for the run's files.
impl Sim {
    pub fn start() -> Self {
        let rt = common::runtime();
        let sim = rt.block_on(Simulator::start()).unwrap();
        let admin = sim.admin();
        // A reset forgets the clock's setting: it goes first.
        sim.reset().unwrap();
        let clock: admin::types::ClockSetting =
            serde_json::from_value(json!({"now": 1_767_225_600_000_i64, "frozen": true})).unwrap();
        rt.block_on(admin.set_clock().body(clock).send()).unwrap();
        rt.block_on(admin.load_builtin_seed().name("demo").send())
            .unwrap();
        Sim {
            rt,
            sim,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// `licensing probe` for this simulator, through the environment only, at 20 requests
    /// a second.
    pub fn probe(&self) -> std::process::Command {
        self.probe_at("20")
    }

    /// [`Sim::probe`] at `rate` requests a second.
    pub fn probe_at(&self, rate: &str) -> std::process::Command {
        let mut cmd = common::for_simulator(&self.sim.url(), self.dir.path());
        cmd.arg("probe").args(["--rate", rate]).stdin(Stdio::null());
        cmd
    }

    /// The probe's arguments for the demo enterprise and its channel customer.
    pub fn ids(&self) -> Vec<String> {
        let mut args = vec!["--enterprise".to_string(), self.enterprise()];
        args.extend(
            ["--channel-code", "CH01", "--channel-customer-id", "CC-ACME"].map(String::from),
        );
        args
    }

    /// A path in the test's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The state export without the id counter: an employee added and deleted leaves it
    /// one on, as ids are never given twice.
    pub fn state(&self) -> Value {
        let mut state = self.sim.export_state();
        state["state"].as_object_mut().unwrap().remove("sequence");
        state
    }

    /// The journal's entries, oldest first.
    pub fn journal(&self) -> Vec<Value> {
        self.journal_entries()
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect()
    }

    /// The demo enterprise's id.
    pub fn enterprise(&self) -> String {
        let state = self.sim.export_state();
        state["state"]["enterprises"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone()
    }

    /// `--writes` on the demo enterprise and `lock`, its ledger at `ledger`, the report
    /// as JSON.
    pub fn writes_run(&self, lock: &str, ledger: &std::path::Path) -> std::process::Output {
        self.probe()
            .args(self.ids())
            .args(["--writes", "--asset", lock, "-o", "json", "--ledger"])
            .arg(ledger)
            .output()
            .unwrap()
    }

    /// The number of a refillable lock of the demo enterprise that lends nothing: one whose
    /// state a disable changes.
    pub fn refillable_lock(&self) -> String {
        let state = self.sim.export_state();
        let assets = state["state"]["assets"].as_object().unwrap();
        let loans = state["state"]["loans"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assets
            .iter()
            .find(|(num, a)| {
                a["licenseType"] == "normal_recover_usbkey"
                    && !loans.contains_key(num.as_str())
                    && a["lentLock"] != true
            })
            .map(|(num, _)| num.clone())
            .unwrap_or_else(|| panic!("no refillable lock in {assets:#?}"))
    }

    /// Adds a fault rule.
    pub fn fault(&self, rule: Value) {
        let rule: admin::types::FaultRuleSpec = serde_json::from_value(rule).unwrap();
        self.rt
            .block_on(self.sim.admin().create_fault().body(rule).send())
            .unwrap();
    }
}

/// A finished run's report (stdout, JSON) and exit code.
pub fn report(output: &std::process::Output) -> (Value, Option<i32>) {
    let text = String::from_utf8_lossy(&output.stdout);
    let report = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not a JSON report ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (report, output.status.code())
}

/// Each check's id and verdict.
pub fn verdicts(report: &Value) -> Vec<(String, String)> {
    report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap().to_string(),
                o["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The outcome of check `id`.
#[track_caller]
pub fn outcome<'r>(report: &'r Value, id: &str) -> &'r Value {
    report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {report:#}"))
}

/// The ids of the checks with `verdict`.
pub fn with_verdict(report: &Value, verdict: &str) -> Vec<String> {
    verdicts(report)
        .into_iter()
        .filter(|(_, v)| v == verdict)
        .map(|(id, _)| id)
        .collect()
}

/// The ledger's records after its first line.
pub fn ledger(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Asserts that every write the ledger shows applied (or of unknown outcome) is undone
/// exactly once, and that nothing is undone that was not announced.
#[track_caller]
pub fn undone_once(records: &[Value]) {
    let events = |seq: &Value, event: &str| {
        records
            .iter()
            .filter(|r| r["seq"] == *seq && r["event"] == event)
            .count()
    };
    for intent in records.iter().filter(|r| r["event"] == "intent") {
        let seq = &intent["seq"];
        let written: Vec<&Value> = records
            .iter()
            .filter(|r| r["seq"] == *seq && r["event"] == "written")
            .collect();
        let refused = written
            .iter()
            .any(|w| w["result"] == "refused" || w["result"] == "not sent");
        let expected = usize::from(!refused);
        assert!(
            events(seq, "undone") == expected,
            "write {seq} undone {} times: {records:#?}",
            events(seq, "undone")
        );
    }
    for r in records.iter().filter(|r| r["event"] != "intent") {
        assert!(
            records
                .iter()
                .any(|i| i["event"] == "intent" && i["seq"] == r["seq"]),
            "a record of no write: {r}"
        );
    }
}
