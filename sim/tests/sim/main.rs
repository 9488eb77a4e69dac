//! The simulator's tests, one binary: error codes, operations end to end, protocol, and
//! the router against the operation table.

mod errors;
mod operations;
mod protocol;
mod routes;
mod support;
