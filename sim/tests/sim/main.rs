//! The simulator's tests, one binary: error codes, operations end to end, protocol, and
//! the router against the operation table, and HTTPS.

mod conformance;
mod errors;
mod fidelity;
mod limits;
mod operations;
#[path = "../../../tests/support/pki.rs"]
mod pki;
mod protocol;
mod routes;
mod sandbox;
mod support;
mod tls;
