//! A simulator upstream seeded with the demo enterprise, a proxy in front of it writing a
//! report, and a raw client that sends what the documents ask (credentials, `g_nonce`).

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
};

use licensing_proxy::{Deviation, Proxy, ProxyBuilder};
use licensing_sim::{
    DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN, Simulator,
    admin::types::{Fault, FaultKind, FaultRuleSpec, PatchOperation},
};
use licensing_test_support::process::{listening_url, stderr_of};
use serde_json::{Value, json};

pub struct Env {
    pub sim: Simulator,
    pub proxy: Proxy,
    pub report: PathBuf,
    pub enterprise: String,
    pub member: String,
    pub asset_id: String,
    pub http: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// The simulator's default tokens, as a replay sends them.
pub fn tokens() -> licensing_proxy::tools::Tokens {
    licensing_proxy::tools::Tokens {
        app: DEFAULT_APP_TOKEN.into(),
        client: DEFAULT_CLIENT_TOKEN.into(),
        user: DEFAULT_USER_TOKEN.into(),
    }
}

/// A temporary directory of its own, removed when dropped.
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("licensing-proxy-{name}-"))
        .tempdir()
        .unwrap()
}

/// The binary (`licensing-proxy`) in front of `upstream`, logging at `debug`, its report
/// and its recording in a directory of its own.
pub struct Logged {
    pub child: Child,
    pub url: String,
    pub report: PathBuf,
    pub record: PathBuf,
    _dir: tempfile::TempDir,
}

impl Logged {
    pub fn start(upstream: &str, name: &str) -> Logged {
        let dir = temp_dir(name);
        let report = dir.path().join("report.jsonl");
        let record = dir.path().join("recording.har");
        let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
            .args(["--addr", "127.0.0.1:0", "--upstream", upstream])
            .arg("--report")
            .arg(&report)
            .arg("--record")
            .arg(&record)
            .env("RUST_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let url = listening_url(&mut child);
        Logged {
            child,
            url,
            report,
            record,
            _dir: dir,
        }
    }

    /// Stops the proxy with SIGTERM, on which it writes the recording given with
    /// `--record`; its logs, once it has exited cleanly.
    pub fn stop(&mut self) -> String {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_child(&self.child),
            rustix::process::Signal::TERM,
        );
        let logs = stderr_of(&mut self.child);
        assert!(self.child.wait().unwrap().success());
        logs
    }
}

pub async fn start() -> Env {
    start_with(|b| b).await
}

pub async fn start_with(configure: impl FnOnce(ProxyBuilder) -> ProxyBuilder) -> Env {
    let sim = Simulator::start().await.unwrap();
    let seeded = licensing_test_support::sim::load_demo(&sim.admin()).await;
    let acme = &seeded.enterprises[0];
    let dir = temp_dir("env");
    let report = dir.path().join("report.jsonl");
    let proxy = configure(Proxy::builder(&sim.url()).report(&report))
        .start()
        .await
        .unwrap();
    Env {
        enterprise: acme.enterprise_global_id.clone(),
        member: acme.members["alice"].clone(),
        asset_id: acme.assets["cad-lock-1"].asset_id.clone(),
        sim,
        proxy,
        report,
        http: reqwest::Client::new(),
        _dir: dir,
    }
}

/// A raw reply through the proxy.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub deviations: usize,
    pub exchange: String,
    pub body: Value,
}

impl Reply {
    /// The reply's `message` (empty when it has none).
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }
}

fn nonce() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "n{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

impl Env {
    pub async fn call(
        &self,
        id: &str,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Reply {
        call(&self.http, &self.proxy.url(), id, path, query, body).await
    }

    /// Adds a fault rule to the upstream simulator.
    pub async fn fault(&self, operation: &str, fault: licensing_sim::admin::types::builder::Fault) {
        self.sim
            .admin()
            .create_fault()
            .body(FaultRuleSpec::builder().operation(operation).fault(fault))
            .send()
            .await
            .unwrap();
    }

    /// A `patch` fault on every call of `operation`.
    pub async fn patch(&self, operation: &str, patch: Value) {
        let ops: Vec<PatchOperation> = serde_json::from_value(patch).unwrap();
        self.fault(
            operation,
            Fault::builder().kind(FaultKind::Patch).patch(ops),
        )
        .await;
    }

    /// The report's deviations so far.
    pub fn deviations(&self) -> Vec<Deviation> {
        read_report(&self.report)
    }

    /// A sequence of calls touching every operation, successes and business errors, as a
    /// client following the documents sends them.
    pub async fn traffic(&self, base: &str) -> Vec<Reply> {
        let eg = self.enterprise.as_str();
        let mg = self.member.as_str();
        let mut replies = Vec::new();
        let mut push = |r: Reply| replies.push(r);
        push(
            call(
                &self.http,
                base,
                "listMembers",
                &[eg],
                &[("pageNum", "1"), ("pageSize", "10")],
                None,
            )
            .await,
        );
        push(call(&self.http, base, "listAssetNums", &[eg], &[], None).await);
        push(call(&self.http, base, "listLentLocks", &[eg], &[], None).await);
        push(
            call(
                &self.http,
                base,
                "listAssetProducts",
                &[&self.asset_id],
                &[],
                None,
            )
            .await,
        );
        push(call(&self.http, base, "listVirtualAssets", &[eg], &[], None).await);
        push(
            call(
                &self.http,
                base,
                "queryEnterprise",
                &[],
                &[
                    ("channelCode", "CH01"),
                    ("channelCustomerId", "CC-ACME"),
                    ("defaultCustomer", "N"),
                ],
                None,
            )
            .await,
        );
        push(
            call(
                &self.http,
                base,
                "allocateShellNums",
                &[],
                &[],
                Some(json!({"size": 2})),
            )
            .await,
        );
        push(
            call(
                &self.http,
                base,
                "editMember",
                &[eg, mg],
                &[],
                Some(json!({"userName": "alice", "name": "Alice A", "remark": "design"})),
            )
            .await,
        );
        push(
            call(
                &self.http,
                base,
                "resetMemberPassword",
                &[eg, mg],
                &[],
                Some(json!({"password": "Secret-Pass-9"})),
            )
            .await,
        );
        push(
            call(&self.http, base, "addMembers", &[eg], &[], Some(json!({"userList": [{"userName": "dave", "password": "Initial-Pass-4", "name": "Dave"}]})))
                .await,
        );
        // Business errors the documents list.
        push(call(&self.http, base, "deleteMember", &[eg, "MG-404"], &[], None).await);
        push(call(&self.http, base, "listAssetNums", &["EG-404"], &[], None).await);
        replies
    }
}

/// Sends operation `id` to `base` with the documented credentials and a fresh nonce.
pub async fn call(
    http: &reqwest::Client,
    base: &str,
    id: &str,
    path: &[&str],
    query: &[(&str, &str)],
    body: Option<Value>,
) -> Reply {
    let op = licensing_sdk::operations::find(id).unwrap();
    let url = format!("{base}{}", op.path_with(path));
    let mut request = http
        .request(
            reqwest::Method::from_bytes(op.method.as_str().as_bytes()).unwrap(),
            url,
        )
        .query(&[("g_nonce", nonce())])
        .query(query)
        .header("content-type", "application/json");
    request = match op.service {
        licensing_sdk::operations::Service::Order => request.bearer_auth(DEFAULT_APP_TOKEN),
        licensing_sdk::operations::Service::Member => request
            .bearer_auth(DEFAULT_CLIENT_TOKEN)
            .header("clientToken", DEFAULT_CLIENT_TOKEN)
            .header("userToken", DEFAULT_USER_TOKEN),
    };
    if let Some(body) = body {
        request = request.body(body.to_string());
    }
    let reply = request.send().await.unwrap();
    let header = |name: &str| {
        reply
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let deviations = header("x-licensing-deviations").map_or(usize::MAX, |v| v.parse().unwrap());
    let exchange = header("x-licensing-exchange").unwrap_or_default();
    let status = reply.status().as_u16();
    let bytes = reply.bytes().await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Reply {
        status,
        deviations,
        exchange,
        body,
    }
}

pub fn read_report(path: &std::path::Path) -> Vec<Deviation> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
