//! The benchmark lab: every comparison of `BENCHMARKS.md` run side by side in one run on
//! this machine ([`measure`]), its measurements written as one JSON record
//! ([`results::Results`]), and the document rendered from that record ([`render`]), so
//! that the prose can change without measuring again.
//!
//! | what | baseline | how |
//! |---|---|---|
//! | SDK call overhead | hand-written reqwest + serde_json, same server, same process | `benches/overhead.rs` |
//! | simulator throughput | Prism (mock of the same spec), WireMock and Mockoon (stubs written from the spec's examples) and a bare hyper server (the ceiling) | `licensing-sim`, `prism mock`, WireMock's jar, `mockoon-cli start`, `bench-load bare-server`, each loaded by `bench-load load` from another process |
//! | the same, by an outside tool | the figures of `bench-load load` | oha (pinned, installed into the target directory) on the same five servers, same load |
//! | batch, client side | bare `serde_json` serialize + parse of the same request and reply | `benches/batch`, no network |
//! | batch, simulator side | a bare handler parsing the same body into the same types | `benches/batch` against `licensing-sim` and `batch --bare-server` |
//! | batch, round trip | bare `serde_json` serialize + parse of the same request | `benches/batch` against `licensing-sim` |
//! | paging | the same stream at a tenth of the size | `benches/paging.rs` against `licensing-sim` |
//! | a hostile reply's peak heap | the reply's size (target ≤ 3×) | `benches/reply.rs` against a server thread of its own |
//! | bulk submit | the SDK called directly on the same file (`benches/bulk.rs`) | `licensing orders submit`, each side a process against a fresh `licensing-sim` |
//! | conformance proxy | the simulator direct, same load, in turn | `licensing-proxy` in front of `licensing-sim`, both loaded by `bench-load load` |
//! | a fresh sandbox per test | WireMock's standalone jar and Prism, each started anew and polled until it answers | `licensing_sandbox` (Python) and `startSandbox` (Node) from the packages of `target/dist`, timed in their own processes |
//! | build cost | targets (≤ 1 s generation, ≤ 10 s rebuild) | the generator timed in this process; with `--build-cost`, debug `cargo build`s timed |
//!
//! Every binary is found where cargo put it (its JSON build messages; `cargo metadata`'s
//! `target_directory` for the rest), so `CARGO_TARGET_DIR` is honoured. `--smoke` builds
//! the debug binaries, starts every server, runs each path once at its smallest size,
//! checks the results and renders them, without timing anything or writing outside the
//! target directory.

use std::path::{Path, PathBuf};

mod build_cost;
mod bulk;
mod cargo;
mod fresh;
mod http;
mod lab;
mod load;
pub mod measure;
mod oha;
mod peers;
mod progress;
mod proxy;
pub mod render;
pub mod results;
mod seed;
mod servers;
mod specs;
mod stats;
pub mod targets;
mod tenants;
mod throughput;

pub use cargo::target_dir;

/// The application token of the simulator's default settings, which every load sends.
const APP_TOKEN: &str = "sim-app-token";

/// The repository root: the parent of this package, wherever cargo is invoked from.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the lab lives one level below the workspace root")
        .to_path_buf()
}
