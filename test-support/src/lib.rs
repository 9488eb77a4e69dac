//! The workspace's test helpers, written once and used as a dev-dependency (never
//! published): each package's tests, benchmarks and `cargo xtask bench` take them from
//! here instead of including another package's files.
//!
//! The modules that need more than the standard library are behind features, so that a
//! package builds only what its tests use: `pki` (rcgen), `servers` (tokio), `sdk` (the SDK
//! without a TLS feature, and the spec's examples as replies), `sim` (the simulator and reqwest, and the console's pages over
//! HTTP).

pub mod architecture;
#[cfg(feature = "sim")]
pub mod console;
pub mod functions;
pub mod heap;
pub mod layers;
pub mod orders;
#[cfg(feature = "sdk")]
pub mod partner;
#[cfg(feature = "pki")]
pub mod pki;
pub mod process;
#[cfg(feature = "servers")]
pub mod proxy;
pub mod raw;
#[cfg(feature = "sdk")]
pub mod replies;
#[cfg(feature = "sim")]
pub mod sim;
