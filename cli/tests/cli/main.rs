//! The `licensing` binary against an in-process simulator: every operation through its
//! command, outputs, errors and exit codes, configuration, the raw call, the sandbox
//! commands, and bulk submission.

mod bulk;
mod commands;
#[path = "../common/licensing.rs"]
mod common;
mod config;
mod exactly_once;
#[path = "../common/sim.rs"]
mod sim;
mod tenant;
mod torn;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Stdio,
};

use licensing_sim::Simulator;
pub use sim::Sim;

/// Sends `signal` (a `libc::SIG…` number) to `child`, through rustix's safe call; a child
/// that has already exited is left alone.
#[cfg(unix)]
pub fn signal(child: &std::process::Child, signal: i32) {
    use rustix::process::{Pid, Signal, kill_process};
    let signal = Signal::from_named_raw(signal).expect("a signal with a name");
    let _ = kill_process(Pid::from_child(child), signal);
}

/// One asset number asked for, never retried: the call the tests of transport and
/// precedence make.
pub const ALLOCATE_ONE: [&str; 6] = [
    "order",
    "allocate-shell-nums",
    "--size",
    "1",
    "--retry",
    "never",
];

/// A simulator seeded with the demo seed, on a runtime of its own, and a config directory.
impl Sim {
    pub fn start() -> Self {
        Self::start_with(|builder| builder)
    }

    /// As [`Sim::start`], with more of the simulator's settings.
    pub fn start_with(
        settings: impl FnOnce(licensing_sim::SimulatorBuilder) -> licensing_sim::SimulatorBuilder,
    ) -> Self {
        let rt = common::runtime();
        let seed = licensing_sim::admin::builtin_seed("demo").unwrap();
        let sim = rt
            .block_on(settings(Simulator::builder().seed(seed)).start())
            .unwrap();
        Sim {
            rt,
            sim,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The binary, configured for this simulator through the environment only.
    pub fn cmd(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.process())
    }

    /// [`Sim::cmd`] as a plain process, for the tests that spawn it and signal it.
    pub fn process(&self) -> std::process::Command {
        common::for_simulator(&self.sim.url(), self.dir.path())
    }

    /// `orders submit` of `file`: a first run writing `results`, its channel order ids
    /// prefixed `prefix`, or with `resume` a run continuing it (with `--retry-unknown`
    /// where asked); the appKey from the environment, never retrying, stdout dropped and
    /// stderr kept.
    pub fn submit(
        &self,
        file: &Path,
        results: &Path,
        resume: bool,
        retry_unknown: bool,
        prefix: &str,
    ) -> std::process::Command {
        let mut cmd = self.process();
        cmd.args(["orders", "submit"]).arg(file);
        if resume {
            cmd.arg("--resume").arg(results);
            if retry_unknown {
                cmd.arg("--retry-unknown");
            }
        } else {
            cmd.args(["--channel-code", "CH01", "--order-id-prefix", prefix])
                .arg("--results")
                .arg(results);
        }
        cmd.env("LICENSING_APP_KEY", "APP_KEY")
            .env("LICENSING_RETRY", "never")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    }

    /// The binary run with `args` to its end.
    pub fn run(&self, args: &[&str]) -> std::process::Output {
        self.cmd().args(args).output().unwrap()
    }

    /// The binary run with `args`, which must succeed: its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.cmd().args(args).output().unwrap();
        common::assert_success(&output, format_args!("{args:?}"));
        stdout(&output)
    }

    /// The binary run with `args`, `stdin` its input.
    pub fn run_with_stdin(&self, args: &[&str], stdin: impl Into<Vec<u8>>) -> std::process::Output {
        self.cmd().args(args).write_stdin(stdin).output().unwrap()
    }

    /// A path in the test's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The operationIds the services were asked, oldest first.
    pub fn journal(&self) -> Vec<String> {
        self.journal_entries()
            .into_iter()
            .filter_map(|e| e.operation)
            .collect()
    }

    /// The simulator's license orders.
    pub fn orders(&self) -> BTreeMap<String, serde_json::Value> {
        let state = self.sim.export_state();
        serde_json::from_value(state["state"]["orders"].clone()).unwrap()
    }
}

/// Asserts that a run exited with `code` and said `text` on stderr.
#[track_caller]
pub fn assert_exit(output: &std::process::Output, code: i32, text: &str) {
    assert_eq!(output.status.code(), Some(code));
    assert!(stderr(output).contains(text), "{}", stderr(output));
}

/// The URL of a port nothing listens on: a call to it fails to connect.
pub fn dead_url() -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", closed.local_addr().unwrap())
}

/// stdout as text.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// stderr as text.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Times (milliseconds since the epoch) and durations vary from run to run.
pub fn filters() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\b1[0-9]{12}\b", "[TIME]");
    settings.add_filter(r"g_nonce=[A-Za-z0-9_-]+", "g_nonce=[NONCE]");
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings
}
