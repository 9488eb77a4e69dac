//! A run with `--writes` stopped by each signal at each point (before its first write,
//! between a write and its undo, during the undos), then `--finish`: the state is the
//! one before, and the ledger shows each write undone once.

use std::{
    path::Path,
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use serde_json::Value;

use super::{Sim, common, ledger, undone_once};

#[derive(Clone, Copy, Debug)]
enum Point {
    BeforeFirstWrite,
    BetweenWriteAndUndo,
    DuringUndos,
}

impl Point {
    /// Whether the ledger's records show the run at this point.
    fn reached(self, records: &[Value], header: bool) -> bool {
        let has = |seq: &Value, event: &str| {
            records
                .iter()
                .any(|r| r["seq"] == *seq && r["event"] == event)
        };
        match self {
            Point::BeforeFirstWrite => header && records.is_empty(),
            Point::BetweenWriteAndUndo => records.iter().any(|r| {
                r["event"] == "written" && r["result"] == "applied" && !has(&r["seq"], "undoing")
            }),
            Point::DuringUndos => records
                .iter()
                .any(|r| r["event"] == "undoing" && !has(&r["seq"], "undone")),
        }
    }
}

/// Sends `signal` (a `libc::SIG…` number) to `child`, through rustix's safe call.
fn signal(child: &Child, signal: i32) {
    use rustix::process::{Pid, Signal, kill_process};
    let signal = Signal::from_named_raw(signal).expect("a signal with a name");
    let _ = kill_process(Pid::from_child(child), signal);
}

/// Waits until the ledger shows `point`; whether it did before the run ended.
fn wait_for(child: &mut Child, path: &Path, point: Point) -> bool {
    let give_up = Instant::now() + Duration::from_secs(120);
    while Instant::now() < give_up {
        let header = std::fs::read_to_string(path).is_ok_and(|t| t.contains('\n'));
        if point.reached(&ledger(path), header) {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// How many requests other than GETs the simulator's journal holds.
fn writes(sim: &Sim) -> usize {
    sim.journal()
        .iter()
        .filter(|e| e["method"] != "GET")
        .count()
}

fn stopped_at(number: i32, exit: Option<i32>) {
    for point in [
        Point::BeforeFirstWrite,
        Point::BetweenWriteAndUndo,
        Point::DuringUndos,
    ] {
        let sim = Sim::start();
        let before = sim.state();
        let path = sim.path("run.ledger");
        let mut child = sim
            .probe_at("10")
            .args(sim.ids())
            .args(["--writes", "-o", "json", "--ledger"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(
            wait_for(&mut child, &path, point),
            "{point:?}: the run never got there"
        );
        signal(&child, number);
        let status = child.wait().unwrap();
        let stderr = licensing_test_support::process::stderr_of(&mut child);
        match exit {
            Some(code) => assert_eq!(status.code(), Some(code), "{point:?}: {stderr}"),
            None => assert_eq!(status.code(), None, "{point:?}: killed, {stderr}"),
        }
        if exit.is_some() {
            // A signal the run can catch is a stop: the run undid its writes itself.
            assert_eq!(
                sim.state(),
                before,
                "{point:?}: not undone on the signal: {stderr}"
            );
        }
        let stopped = writes(&sim);
        let finish = sim
            .probe_at("10")
            .arg("--finish")
            .arg(&path)
            .output()
            .unwrap();
        common::assert_success(&finish, format_args!("{point:?}: --finish"));
        assert_eq!(
            sim.state(),
            before,
            "{point:?}: the state is not the one before"
        );
        if exit.is_some() {
            assert_eq!(
                writes(&sim),
                stopped,
                "{point:?}: --finish found a write left"
            );
        }
        let records = ledger(&path);
        undone_once(&records);
        // --finish names each write of the ledger on a line of its own.
        let said = String::from_utf8_lossy(&finish.stderr);
        let intents = records.iter().filter(|r| r["event"] == "intent").count();
        assert_eq!(
            said.lines().filter(|l| l.starts_with("write ")).count(),
            intents,
            "{point:?}: {said}"
        );
        // A second --finish has nothing left: it sends no write.
        let sent = writes(&sim);
        assert!(
            sim.probe_at("10")
                .arg("--finish")
                .arg(&path)
                .output()
                .unwrap()
                .status
                .success()
        );
        assert_eq!(writes(&sim), sent, "{point:?}: a write undone twice");
    }
}

#[test]
fn sigint_at_every_point_is_undone_once() {
    stopped_at(libc::SIGINT, Some(130));
}

#[test]
fn sigterm_at_every_point_is_undone_once() {
    stopped_at(libc::SIGTERM, Some(143));
}

#[test]
fn sighup_at_every_point_is_undone_once() {
    stopped_at(libc::SIGHUP, Some(129));
}

#[test]
fn sigkill_at_every_point_is_undone_by_finish() {
    stopped_at(libc::SIGKILL, None);
}
