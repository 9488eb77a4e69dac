//! WireMock and Mockoon, two stateless stub servers, beside Prism in the throughput
//! comparison. Their stubs are written from the spec on every run (never by hand): for each
//! loaded operation its method and path, and the status, content type, headers and example
//! body of its success reply. Both come from npm at pinned versions, installed into the
//! target directory while cargo builds; each is checked to answer every loaded request with
//! its example before any load.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::http::request;
use crate::servers::{Server, free_port};
use crate::specs::Spec;

mod install;
mod stubs;

use install::wiremock_jar;
pub use install::{PeersInstall, java_version, node_version};
use stubs::{Stub, write_mockoon, write_wiremock};

/// The npm package `wiremock`: WireMock's standalone jar, run with Java.
pub const WIREMOCK_VERSION: &str = "3.13.2";
/// The npm package `@mockoon/cli`.
pub const MOCKOON_VERSION: &str = "9.9.0";

/// The stub servers of the comparison, in the order they are loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    WireMock,
    Mockoon,
}

impl Peer {
    /// Every stub server, in the order they are loaded.
    pub const ALL: [Peer; 2] = [Peer::WireMock, Peer::Mockoon];

    /// The key of its results.
    pub fn key(self) -> &'static str {
        match self {
            Peer::WireMock => "wiremock",
            Peer::Mockoon => "mockoon",
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Peer::WireMock => "WireMock",
            Peer::Mockoon => "Mockoon",
        }
    }
}

// ------------------------------------------------------------------------- servers

/// One request as the load sends it, for the check before the load.
pub struct Probe<'a> {
    /// `operationId`.
    pub id: &'a str,
    /// Without the `?`.
    pub query: String,
    /// The JSON body, if the operation takes one.
    pub body: Option<&'a str>,
}

/// Both stub servers, serving the stubs of `probes`' operations, each checked to answer
/// every probe with its example.
pub fn start(specs: &[Spec], target_dir: &Path, probes: &[Probe]) -> Result<Vec<(Peer, Server)>> {
    // `run` has them installed while cargo builds; anything else installs them here.
    if let Some(install) = PeersInstall::start(target_dir)? {
        install.wait(target_dir)?;
    }
    let ids: Vec<&str> = probes.iter().map(|p| p.id).collect();
    let stubs = stubs::stubs(specs, &ids)?;
    let mut started = Vec::new();
    for peer in Peer::ALL {
        let server = match peer {
            Peer::WireMock => wiremock(target_dir, &stubs)?,
            Peer::Mockoon => mockoon(target_dir, &stubs)?,
        };
        for (stub, probe) in stubs.iter().zip(probes) {
            check(peer, &server.url, stub, probe)?;
        }
        started.push((peer, server));
    }
    Ok(started)
}

/// WireMock's jar run by Java directly: the npm package's `wiremock` command is a Node.js
/// process that starts `java -jar` as a child of its own, which stopping that process
/// would leave running. Its defaults, except the request journal and request logging,
/// off as WireMock documents for long runs and performance testing.
fn wiremock(target_dir: &Path, stubs: &[Stub]) -> Result<Server> {
    let root_dir = write_wiremock(target_dir, stubs)?;
    let port = free_port()?;
    let cmd = wiremock_command(target_dir, &root_dir, port)?;
    Server::quiet(cmd, port, "WireMock (java -jar)")
}

/// `java -jar` of WireMock's standalone jar on `port` of 127.0.0.1 with the root
/// directory `root_dir` (its `mappings/`), as the throughput comparison runs it.
pub fn wiremock_command(target_dir: &Path, root_dir: &Path, port: u16) -> Result<Command> {
    let jar = wiremock_jar(target_dir)?;
    let mut cmd = Command::new("java");
    cmd.arg("-jar")
        .arg(&jar)
        .args(["--port", &port.to_string(), "--bind-address", "127.0.0.1"])
        .arg("--root-dir")
        .arg(root_dir)
        .args(["--disable-banner", "--no-request-journal"])
        .arg("--disable-request-logging");
    Ok(cmd)
}

/// A WireMock root directory at `root` with the stubs of the operations `ids` (none:
/// an empty `mappings/`), from the specs.
pub fn wiremock_root(specs: &[Spec], ids: &[&str], root: &Path) -> Result<PathBuf> {
    stubs::write_wiremock_at(root, &stubs::stubs(specs, ids)?)
}

/// `mockoon-cli start`, its defaults except the log file (each transaction is still
/// logged, to stdout, discarded here): one process, Node.js running the CLI's script.
fn mockoon(target_dir: &Path, stubs: &[Stub]) -> Result<Server> {
    let port = free_port()?;
    let data = write_mockoon(target_dir, stubs, port)?;
    let script = PeersInstall::package(target_dir, "@mockoon/cli").join("bin/run.js");
    let mut cmd = Command::new("node");
    cmd.arg(&script)
        .arg("start")
        .arg("--data")
        .arg(&data)
        .args(["--port", &port.to_string(), "--hostname", "127.0.0.1"])
        .arg("--disable-log-to-file");
    Server::quiet(cmd, port, "Mockoon (mockoon-cli start)")
}

/// `peer` answers the probe, sent as the load sends it, with the stub's status, content
/// type and example body; anything else (a 404 of a stub that did not match, another
/// body) ends the benchmark.
fn check(peer: Peer, url: &str, stub: &Stub, probe: &Probe) -> Result<()> {
    let target = format!("{}?{}", stub.path, probe.query);
    let (status, content_type, body) = request(url, &stub.method, &target, probe.body)
        .with_context(|| format!("{} on {} {target}", peer.name(), stub.method))?;
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    if status != stub.status
        || !content_type
            .to_ascii_lowercase()
            .starts_with(&stub.content_type.to_ascii_lowercase())
        || parsed.as_ref() != Some(&stub.body)
    {
        bail!(
            "{} answered {} {target} with HTTP {status} ({content_type}) {}, not the spec's \
             example of `{}` (HTTP {}, {}): {}",
            peer.name(),
            stub.method,
            String::from_utf8_lossy(&body),
            stub.id,
            stub.status,
            stub.content_type,
            stub.body
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use serde_json::json;

    use super::*;

    /// A server on a thread that answers one connection with `reply`, after reading the
    /// request's head.
    fn answering(reply: &'static str) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
                head.push(byte[0]);
            }
            stream.write_all(reply.as_bytes()).unwrap();
        });
        url
    }

    #[test]
    fn the_check_wants_the_example() {
        let stub = Stub {
            id: "op".into(),
            method: "GET".into(),
            path: "/a".into(),
            status: 200,
            content_type: "application/json".into(),
            headers: Vec::new(),
            body: json!({ "code": 0 }),
        };
        let probe = Probe {
            id: "op",
            query: "g_nonce=1".into(),
            body: None,
        };
        let url = answering(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\n\
             transfer-encoding: chunked\r\n\r\n4\r\n{\"co\r\n6\r\nde\":0}\r\n0\r\n\r\n",
        );
        check(Peer::Mockoon, &url, &stub, &probe).unwrap();
        let url = answering("HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\nnot found");
        let error = check(Peer::WireMock, &url, &stub, &probe).unwrap_err();
        assert!(error.to_string().contains("HTTP 404"), "{error}");
        let url = answering(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n{\"code\":1}",
        );
        assert!(check(Peer::WireMock, &url, &stub, &probe).is_err());
    }
}
