//! The conformance proxy on loopback: the simulator as upstream, broken in known ways by
//! `patch` and `status` fault rules; a second upstream written in Python; secrets kept out
//! of the report, the recording and the logs; the recording, report, seed and replay tools;
//! the proxy's console.

mod console;
mod deviations;
mod https;
#[path = "../../../tests/support/pki.rs"]
mod pki;
mod replay;
mod secrets;
mod stub;
mod support;
