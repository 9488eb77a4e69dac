//! The loaded requests, and `bench-load load`: the generator that loads several servers
//! in turn, in slices of [`SLICE_MS`] from one process, so that the rates a ratio compares
//! are measured in the same second of a shared machine (oha, one server per process,
//! cannot).

use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::APP_TOKEN;
use crate::lab::Lab;

/// The query string of the read load (`queryEnterprise`); the path comes from the spec.
const QUERY_PARAMS: &str =
    "channelCode=CH01&channelCustomerId=CC-42&defaultCustomer=N&g_nonce={nonce}";
/// The query string of the write load (`allocateShellNums`).
const SHELLNUMS_PARAMS: &str = "g_nonce={nonce}";

/// How long the load generator stays on one server before the next one's turn.
pub const SLICE_MS: u64 = 100;

/// Keep-alive connections per server in the throughput comparisons.
pub const LOAD_CONNECTIONS: usize = 16;

#[derive(Clone, Copy)]
pub enum Endpoint {
    Read,
    Write,
}

impl Endpoint {
    /// Both endpoints, by the label of their results.
    pub const BOTH: [(&'static str, Endpoint); 2] =
        [("read", Endpoint::Read), ("write", Endpoint::Write)];

    /// The operation, its query string (`{nonce}` for the `g_nonce`) and its body.
    pub fn request(self) -> (&'static str, &'static str, Option<&'static str>) {
        match self {
            Endpoint::Read => ("queryEnterprise", QUERY_PARAMS, None),
            Endpoint::Write => ("allocateShellNums", SHELLNUMS_PARAMS, Some(r#"{"size":1}"#)),
        }
    }
}

/// `bench-load load` on `endpoint` of each server in `urls`, in turn in slices of
/// [`SLICE_MS`], `seconds` each; one summary per server, in order.
pub fn load(lab: &Lab, urls: &[&str], endpoint: Endpoint, seconds: u64) -> Result<Vec<Value>> {
    load_with(lab, urls, endpoint, seconds, LOAD_CONNECTIONS)
}

/// [`load`] with `connections` keep-alive connections per server.
pub fn load_with(
    lab: &Lab,
    urls: &[&str],
    endpoint: Endpoint,
    seconds: u64,
    connections: usize,
) -> Result<Vec<Value>> {
    load_as(lab, urls, &[], endpoint, seconds, connections)
}

/// [`load_with`] with the i-th URL's bearer token `tokens[i]` (the benchmark's token for
/// every URL when `tokens` is empty): tenants of one simulator each take their own.
pub fn load_as(
    lab: &Lab,
    urls: &[&str],
    tokens: &[&str],
    endpoint: Endpoint,
    seconds: u64,
    connections: usize,
) -> Result<Vec<Value>> {
    let (id, params, body) = endpoint.request();
    let (method, path) = lab.operation(id)?;
    let path = format!("{path}?{params}");
    let (method, path) = (method.as_str(), path.as_str());
    let mut cmd = Command::new(&lab.bins.load);
    cmd.args([
        "load",
        "--method",
        method,
        "--seconds",
        &seconds.to_string(),
        "--slice-ms",
        &SLICE_MS.to_string(),
        "--concurrency",
        &connections.to_string(),
    ]);
    for url in urls {
        cmd.arg("--url").arg(format!("{url}{path}"));
    }
    if tokens.is_empty() {
        cmd.args(["--header", &format!("authorization: Bearer {APP_TOKEN}")]);
    }
    for token in tokens {
        cmd.arg("--bearer").arg(token);
    }
    cmd.args(["--header", "content-type: application/json"]);
    if let Some(body) = body {
        cmd.args(["--body", body]);
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .context("running the load generator")?;
    if !out.status.success() {
        bail!("load generator failed");
    }
    Ok(match serde_json::from_slice(&out.stdout)? {
        Value::Array(all) => all,
        one => vec![one],
    })
}
