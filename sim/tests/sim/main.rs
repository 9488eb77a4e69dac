//! The simulator's tests, one binary: error codes, operations end to end, protocol.

mod errors;
mod operations;
mod protocol;
mod support;
