//! What the scale benchmarks share: the heap counter, the run mode, medians, and the
//! simulator's admin calls they set up with.
//!
//! A benchmark binary started by `cargo bench` (its arguments hold `--bench`) measures at
//! full size and prints one JSON object; started by `cargo test` (no `--bench`), it runs
//! every path once at a small size against an in-process simulator and only checks the
//! results, so the test suite keeps each path working without timing anything.

#![allow(dead_code)] // each benchmark binary uses its own part of this module

// The heap counter is the test helpers' (the memory test uses it too).
pub use licensing_test_support::heap::{Counting, Heap};

/// Full measurement (`cargo bench`) or the correctness run (`cargo test`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Bench,
    Smoke,
}

impl Mode {
    pub fn from_args() -> Self {
        if std::env::args().any(|a| a == "--bench") {
            Self::Bench
        } else {
            Self::Smoke
        }
    }

    /// The runtime of a benchmark whose client is measured: one thread, as a caller's
    /// task runs; the correctness run's in-process simulator needs threads of its own.
    pub fn runtime(self) -> tokio::runtime::Runtime {
        match self {
            Self::Bench => tokio::runtime::Builder::new_current_thread(),
            Self::Smoke => tokio::runtime::Builder::new_multi_thread(),
        }
        .enable_all()
        .build()
        .unwrap()
    }
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The simulator the benchmark calls: the one `cargo xtask bench` started
/// (`LICENSING_SIM_URL`), or, in a smoke run, one started in this process.
pub struct Sim {
    pub url: String,
    _own: Option<licensing_sim::Simulator>,
}

impl Sim {
    pub async fn get(mode: Mode, trial_member_limit: usize) -> Self {
        match (mode, std::env::var("LICENSING_SIM_URL")) {
            (_, Ok(url)) => Self { url, _own: None },
            (Mode::Bench, Err(_)) => panic!(
                "LICENSING_SIM_URL: the address of a running licensing-sim \
                 (`cargo xtask bench` starts one)"
            ),
            (Mode::Smoke, Err(_)) => {
                let sim = licensing_sim::Simulator::builder()
                    .trial_member_limit(trial_member_limit)
                    .start()
                    .await
                    .expect("the in-process simulator starts");
                Self {
                    url: sim.url(),
                    _own: Some(sim),
                }
            }
        }
    }

    /// Forgets every record (`POST /__sandbox/v1/reset`), so each measured call meets the
    /// same, empty state.
    pub async fn reset(&self, http: &reqwest::Client) {
        let status = http
            .post(format!("{}/__sandbox/v1/reset", self.url))
            .send()
            .await
            .expect("the simulator answers")
            .status();
        assert!(status.is_success(), "reset: HTTP {status}");
    }

    /// Loads a seed (`POST /__sandbox/v1/seed`); its reply.
    pub async fn seed(
        &self,
        http: &reqwest::Client,
        seed: &serde_json::Value,
    ) -> serde_json::Value {
        let reply = http
            .post(format!("{}/__sandbox/v1/seed", self.url))
            .json(seed)
            .send()
            .await
            .expect("the simulator answers");
        let status = reply.status();
        let body: serde_json::Value = reply.json().await.expect("a JSON reply");
        assert!(status.is_success(), "seed: HTTP {status}: {body}");
        body
    }
}

/// A plain HTTP/1.1 client for set-up calls and raw requests: no proxy, one connection
/// kept alive.
pub fn raw_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .http1_only()
        .pool_max_idle_per_host(1)
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .expect("a plain HTTP client")
}

/// Turns a `perf record --control=fifo:CTL,ACK -D -1` on around the measured code only:
/// `PERF_CTL_FIFO=CTL PERF_ACK_FIFO=ACK`. Without those variables it does nothing.
pub struct Perf {
    fifos: Option<(std::fs::File, std::io::BufReader<std::fs::File>)>,
}

impl Perf {
    pub fn from_env() -> Self {
        let (Ok(ctl), Ok(ack)) = (
            std::env::var("PERF_CTL_FIFO"),
            std::env::var("PERF_ACK_FIFO"),
        ) else {
            return Self { fifos: None };
        };
        let ctl = std::fs::OpenOptions::new()
            .write(true)
            .open(ctl)
            .expect("PERF_CTL_FIFO opens");
        let ack = std::fs::File::open(ack).expect("PERF_ACK_FIFO opens");
        Self {
            fifos: Some((ctl, std::io::BufReader::new(ack))),
        }
    }

    fn send(&mut self, command: &str) {
        use std::io::{BufRead as _, Write as _};
        if let Some((ctl, ack)) = &mut self.fifos {
            ctl.write_all(command.as_bytes()).expect("perf control");
            let mut line = String::new();
            ack.read_line(&mut line).expect("perf acknowledges");
        }
    }

    pub fn enable(&mut self) {
        self.send("enable\n");
    }

    pub fn disable(&mut self) {
        self.send("disable\n");
    }
}
