//! The conformance proxy on loopback: the simulator as upstream, broken in known ways by
//! `patch` and `status` fault rules; a second upstream written in Python; secrets kept out
//! of the report, the recording and the logs; the recording, report, seed and replay tools;
//! the proxy's console; what a hostile sweep found (forwarded admin routes, memory per
//! body, credentials echoed by an upstream, forged text output, replayed writes).

mod console;
mod coverage;
mod deviations;
mod echo;
mod hostile;
mod https;
mod memory;
mod raw;
mod replay;
mod secrets;
mod stub;
mod support;
