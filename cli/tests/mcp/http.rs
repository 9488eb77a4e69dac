//! `--http`: the streamable HTTP transport on loopback, the Python SDK's client with the
//! bearer token, and the requests a web page or a stranger could make refused before
//! they reach a tool.

use std::{
    io::{BufRead as _, BufReader, Read as _},
    process::{Child, Stdio},
};

use serde_json::{Value, json};

use crate::{Sim, call, names, python, read_tools, run_client, script, unique};

/// A server listening on a port of its own, and its address.
struct Served {
    child: Child,
    url: String,
    log: Option<std::thread::JoinHandle<String>>,
}

/// A test that fails before [`Served::stop`] leaves no server behind.
impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn start(sim: &Sim, token: &str, flags: &[&str]) -> Self {
        let mut child = sim
            .licensing()
            .env("LICENSING_MCP_TOKEN", token)
            .args(["mcp", "--http", "127.0.0.1:0"])
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut url = None;
        let mut seen = String::new();
        while url.is_none() {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "ended: {seen}");
            seen.push_str(&line);
            url = line
                .trim()
                .strip_prefix("serving MCP at ")
                .map(str::to_string);
        }
        let log = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stderr.read_to_string(&mut rest);
            seen + &rest
        });
        Served {
            child,
            url: url.unwrap(),
            log: Some(log),
        }
    }

    /// Stops the server: everything it logged.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.log.take().expect("stopped once").join().unwrap()
    }
}

/// The status of an `initialize` POSTed with `headers`.
fn initialize(sim: &Sim, url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    });
    sim.rt.block_on(async {
        let mut request = reqwest::Client::new()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        // An accepted one answers on a stream: its status is enough.
        if status == 200 {
            return (status, String::new());
        }
        (status, response.text().await.unwrap_or_default())
    })
}

#[test]
fn http_needs_the_token_and_the_servers_own_origin() {
    let sim = Sim::start();
    let token = format!("{}-{}", unique("mcp-token"), "0".repeat(16));
    let served = Served::start(&sim, &token, &[]);
    let bearer = format!("Bearer {token}");
    let (status, body) = initialize(&sim, &served.url, &[]);
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("LICENSING_MCP_TOKEN"), "{body}");
    let (status, _) = initialize(&sim, &served.url, &[("authorization", "Bearer wrong")]);
    assert_eq!(status, 401);
    let (status, body) = initialize(
        &sim,
        &served.url,
        &[
            ("authorization", &bearer),
            ("origin", "http://evil.example"),
        ],
    );
    assert_eq!(status, 403, "{body}");
    let (status, _) = initialize(
        &sim,
        &served.url,
        &[("authorization", &bearer), ("sec-fetch-site", "cross-site")],
    );
    assert_eq!(status, 403);
    let own = served.url.trim_end_matches("/mcp").to_string();
    let (status, body) = initialize(
        &sim,
        &served.url,
        &[("authorization", &bearer), ("origin", &own)],
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        sim.journal(),
        Vec::<String>::new(),
        "no call reached the platform"
    );

    let plan = json!({
        "http": {"url": served.url, "headers": {"Authorization": bearer}},
        "steps": [
            {"do": "list"},
            call("listLentLocks", json!({"enterpriseGlobalId": "EG-000001"})),
            call("allocateShellNums", json!({"body": {"size": 1}})),
        ],
    });
    let run = run_client(&python(), &[script("client.py")], &plan);
    assert_eq!(names(run.step(0)), read_tools());
    let sdk = sim.cli(&[
        "member",
        "list-lent-locks",
        "--enterprise-global-id",
        "EG-000001",
    ]);
    assert_eq!(run.step(1)["structured"]["data"], sdk);
    assert_eq!(run.step(2)["structured"]["error"]["flag"], "--allow-writes");
    assert_eq!(sim.asked("allocateShellNums"), 0);
    let log = served.stop();
    for text in [&run.stdout, &run.stderr, &log] {
        sim.assert_no_secret("the HTTP run", text);
        assert!(!text.contains(&token), "the MCP token leaked");
    }
    let audit = std::fs::read_to_string(sim.audit_log()).unwrap();
    sim.assert_no_secret("the audit log", &audit);
    assert!(!audit.contains(&token));
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
}

#[test]
fn over_http_an_allowed_write_is_listed_confirmed_and_applied_once() {
    let sim = Sim::start();
    let token = format!("{}-{}", unique("mcp-token"), "1".repeat(16));
    let served = Served::start(
        &sim,
        &token,
        &["--allow-writes", "allocateShellNums", "--max-writes", "2"],
    );
    let allocate = |size: u32| call("allocateShellNums", json!({"body": {"size": size}}));
    let plan = json!({
        "http": {"url": served.url, "headers": {"Authorization": format!("Bearer {token}")}},
        "elicitation": "accept",
        "steps": [
            {"do": "list"},
            allocate(2),
            // The client's retry of the same call: answered from the first, not sent.
            allocate(2),
            call("disableLocks", json!({"body": {"enterpriseGlobalId": "EG-000001", "lockIds": ["L-1"]}})),
            allocate(3),
            allocate(4),
        ],
    });
    let run = run_client(&python(), &[script("client.py")], &plan);
    let mut expected = read_tools();
    expected.push("allocateShellNums".to_string());
    expected.sort();
    assert_eq!(names(run.step(0)), expected);
    let first = run.step(1);
    assert_eq!(first["isError"], false, "{first}");
    assert_eq!(first["structured"]["data"].as_array().unwrap().len(), 2);
    assert_eq!(
        run.step(2)["structured"]["data"],
        first["structured"]["data"]
    );
    assert_eq!(crate::error(run.step(3))["flag"], "--allow-writes");
    assert_eq!(run.step(4)["isError"], false, "{}", run.step(4));
    assert_eq!(crate::error(run.step(5))["flag"], "--max-writes");
    // Asked twice (the two writes sent), never for the retry, the refusals or past the budget.
    assert_eq!(run.asked(), 2, "{}", run.out["asked"]);
    assert_eq!(sim.asked("allocateShellNums"), 2, "{:?}", sim.journal());
    assert_eq!(sim.asked("disableLocks"), 0);
    let log = served.stop();
    for text in [&run.stdout, &run.stderr, &log] {
        sim.assert_no_secret("the HTTP run", text);
        assert!(!text.contains(&token), "the MCP token leaked");
    }
    let outcomes: Vec<Value> = sim.audit().iter().map(|l| l["outcome"].clone()).collect();
    assert_eq!(
        outcomes,
        [
            json!("ok"),
            json!("repeated"),
            json!("refused"),
            json!("ok"),
            json!("refused")
        ]
    );
}
