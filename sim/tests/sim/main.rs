//! The simulator's tests, one binary: error codes, operations end to end, protocol, and
//! the router against the operation table, and HTTPS.

mod conformance;
mod errors;
mod fidelity;
mod limits;
mod operations;
mod protocol;
mod routes;
mod sandbox;
mod tls;

use licensing_test_support::{pki, sim as support};
