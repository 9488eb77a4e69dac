//! `licensing mcp` driven by the official MCP clients, as a person's assistant would run
//! it: the Python SDK's client (`mcp` on PyPI) over stdio and over HTTP, and the
//! TypeScript SDK's (`@modelcontextprotocol/sdk` on npm), each pinned and installed by
//! the set-up below, against an in-process simulator whose tokens are strings of this run
//! alone, searched for in every result, log line and audit log.

mod bounds;
// The runtime and the check of a run only: these tests give the simulator tokens of
// their own and clear the whole environment, not just its `LICENSING_*` variables.
#[path = "../common/licensing.rs"]
#[allow(dead_code, reason = "the commands it makes are not the ones run here")]
mod common;
mod hostile;
mod http;
mod reads;
mod typescript;
mod writes;

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
};

use licensing_sim::Simulator;
use serde_json::{Value, json};

/// The Python SDK's release the tests run.
pub const PYTHON_MCP: &str = "mcp==1.30.0";
/// The TypeScript SDK's release the tests run.
pub const NODE_MCP: &str = "@modelcontextprotocol/sdk@1.32.2";

/// A string no one else has: the tokens and the appKey of one simulator.
fn unique(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{what}-{}-{nanos:x}", std::process::id())
}

/// A simulator seeded with the demo seed, with tokens of its own, and the directory of
/// the server's configuration and audit log.
pub struct Sim {
    pub rt: tokio::runtime::Runtime,
    pub sim: Simulator,
    pub dir: tempfile::TempDir,
    /// The application, client and user tokens, and the appKey.
    pub secrets: [String; 4],
}

impl Sim {
    pub fn start() -> Self {
        let rt = common::runtime();
        let secrets = [
            unique("app-token"),
            unique("client-token"),
            unique("user-token"),
            unique("app-key"),
        ];
        let seed = licensing_sim::admin::builtin_seed("demo").unwrap();
        let builder = Simulator::builder()
            .seed(seed)
            .app_token(&secrets[0])
            .client_token(&secrets[1])
            .user_token(&secrets[2]);
        let sim = rt.block_on(builder.start()).unwrap();
        Sim {
            rt,
            sim,
            dir: tempfile::tempdir().unwrap(),
            secrets,
        }
    }

    /// The environment `licensing` runs with: this simulator, its tokens, a config
    /// directory of the test's own.
    pub fn env(&self) -> Vec<(String, String)> {
        let url = self.sim.url();
        let mut env = vec![
            ("LICENSING_ORDER_URL", url.clone()),
            ("LICENSING_MEMBER_URL", url.clone()),
            ("LICENSING_SANDBOX_URL", url),
            ("LICENSING_APP_TOKEN", self.secrets[0].clone()),
            ("LICENSING_CLIENT_TOKEN", self.secrets[1].clone()),
            ("LICENSING_USER_TOKEN", self.secrets[2].clone()),
            ("LICENSING_APP_KEY", self.secrets[3].clone()),
            (
                "LICENSING_CONFIG_DIR",
                self.dir.path().display().to_string(),
            ),
        ];
        for var in ["PATH", "HOME"] {
            if let Ok(value) = std::env::var(var) {
                env.push((var, value));
            }
        }
        env.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// The audit log's path (the default one, in the config directory).
    pub fn audit_log(&self) -> PathBuf {
        self.dir.path().join("mcp-audit.jsonl")
    }

    /// The audit log's lines.
    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.audit_log())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The operationIds the services were asked, oldest first (from the admin API's
    /// journal).
    pub fn journal(&self) -> Vec<String> {
        let url = format!("{}/__sandbox/v1/journal", self.sim.url());
        let page: Value = self
            .rt
            .block_on(async { reqwest::get(url).await?.json().await })
            .unwrap();
        let entries = page["entries"].as_array().cloned().unwrap_or_default();
        entries
            .iter()
            .filter_map(|e| e["operation"].as_str().map(str::to_string))
            .collect()
    }

    /// The simulator's license orders.
    pub fn orders(&self) -> serde_json::Map<String, Value> {
        let state = self.sim.export_state();
        state["state"]["orders"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    /// How many times `operation` was asked.
    pub fn asked(&self, operation: &str) -> usize {
        self.journal().iter().filter(|o| *o == operation).count()
    }

    /// The binary with [`Sim::env`] as its whole environment.
    pub fn licensing(&self) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("licensing"));
        cmd.env_clear().envs(self.env());
        cmd
    }

    /// `licensing ARGS` run to its end with this simulator: its stdout as JSON (what the
    /// command line prints of what the SDK returns).
    pub fn cli(&self, args: &[&str]) -> Value {
        let output = self
            .licensing()
            .args(args)
            .args(["--output", "json"])
            .output()
            .unwrap();
        common::assert_success(&output, format_args!("{args:?}"));
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// Adds a fault rule through the admin API.
    pub fn fault(&self, rule: Value) {
        let url = format!("{}/__sandbox/v1/faults", self.sim.url());
        let status = self.rt.block_on(async {
            reqwest::Client::new()
                .post(url)
                .json(&rule)
                .send()
                .await
                .unwrap()
                .status()
        });
        assert!(status.is_success(), "{status}");
    }

    /// Asserts that no secret of this simulator is in `text`.
    #[track_caller]
    pub fn assert_no_secret(&self, what: &str, text: &str) {
        for secret in &self.secrets {
            assert!(!text.contains(secret.as_str()), "{what} holds a secret");
        }
    }

    /// Runs a plan with the Python client over stdio, the server started with `flags`;
    /// checks that no secret reached its output, the server's log or the audit log.
    pub fn python(&self, flags: &[&str], plan: Value) -> Run {
        self.stdio(&python(), &[script("client.py")], flags, plan)
    }

    /// [`Sim::python`] with the TypeScript client.
    pub fn node(&self, flags: &[&str], plan: Value) -> Run {
        self.stdio(Path::new("node"), &[node_client()], flags, plan)
    }

    fn stdio(&self, program: &Path, script: &[PathBuf], flags: &[&str], plan: Value) -> Run {
        let mut args = vec!["mcp".to_string()];
        args.extend(flags.iter().map(|f| f.to_string()));
        let env: serde_json::Map<String, Value> =
            self.env().into_iter().map(|(k, v)| (k, v.into())).collect();
        let mut plan = plan;
        plan["stdio"] = json!({
            "command": assert_cmd::cargo::cargo_bin("licensing"),
            "args": args,
            "env": env,
        });
        let run = run_client(program, script, &plan);
        self.check(&run);
        run
    }

    /// Asserts that no secret is in what a run printed, nor in the audit log.
    #[track_caller]
    pub fn check(&self, run: &Run) {
        self.assert_no_secret("the client's output", &run.stdout);
        self.assert_no_secret("the server's log", &run.stderr);
        let audit = std::fs::read_to_string(self.audit_log()).unwrap_or_default();
        self.assert_no_secret("the audit log", &audit);
    }
}

/// What a client's run printed.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    /// The output, read: `protocol`, `steps`, `asked`.
    pub out: Value,
}

impl Run {
    /// Step `i`'s result.
    pub fn step(&self, i: usize) -> &Value {
        &self.out["steps"][i]
    }

    /// The confirmations the server asked for.
    pub fn asked(&self) -> usize {
        self.out["asked"].as_array().map_or(0, Vec::len)
    }
}

/// Runs `program ARGS` with `plan` on stdin: its output, which must be JSON.
pub fn run_client(program: &Path, args: &[PathBuf], plan: &Value) -> Run {
    use std::io::Write as _;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(plan.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let out = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{program:?}: {e}\nstdout: {stdout}\nstderr: {stderr}"));
    Run {
        stdout,
        stderr,
        out,
    }
}

/// A file of this folder.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(name)
}

/// The tests' own installs, made once per target directory: a directory named for what
/// it holds, filled by `fill` in a directory beside it and renamed into place, so that
/// a run stopped half-way leaves nothing that looks done.
fn installed(name: &str, fill: impl FnOnce(&Path)) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-clients");
    let done = root.join(name);
    if done.exists() {
        return done;
    }
    std::fs::create_dir_all(&root).unwrap();
    let work = tempfile::tempdir_in(&root).unwrap();
    fill(work.path());
    let work = work.keep();
    // Another test process may have finished first: theirs is as good.
    if std::fs::rename(&work, &done).is_err() {
        let _ = std::fs::remove_dir_all(&work);
    }
    done
}

/// The venv's Python, with the pinned `mcp` installed.
pub fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let dir = installed(&format!("python-{PYTHON_MCP}"), |dir| {
                let status = Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(dir)
                    .status()
                    .unwrap();
                assert!(status.success(), "python3 -m venv");
                let status = Command::new(dir.join("bin/pip"))
                    .args([
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                        PYTHON_MCP,
                    ])
                    .status()
                    .unwrap();
                assert!(status.success(), "pip install {PYTHON_MCP}");
            });
            dir.join("bin/python")
        })
        .clone()
}

/// The directory with the pinned TypeScript SDK in its `node_modules`, and the client
/// script beside it (an ES module resolves its imports from where it is).
pub fn node_client() -> PathBuf {
    static NODE: OnceLock<PathBuf> = OnceLock::new();
    NODE.get_or_init(|| {
        let dir = installed(&format!("node-{}", NODE_MCP.replace('/', "+")), |dir| {
            std::fs::write(
                dir.join("package.json"),
                r#"{"private": true, "type": "module"}"#,
            )
            .unwrap();
            let status = Command::new("npm")
                .args(["install", "--silent", "--no-audit", "--no-fund", NODE_MCP])
                .current_dir(dir)
                .status()
                .unwrap();
            assert!(status.success(), "npm install {NODE_MCP}");
        });
        let client = dir.join("client.mjs");
        std::fs::copy(script("client.mjs"), &client).unwrap();
        client
    })
    .clone()
}

/// The names of the operations that read (GET), as the SDK's table has them.
pub fn read_operations() -> Vec<&'static str> {
    licensing_sdk::operations::ALL
        .iter()
        .filter(|op| op.method == licensing_sdk::operations::Method::Get)
        .map(|op| op.id)
        .collect()
}

/// The tools listed by default against a simulator, sorted: the platform's reads, and
/// the reads of the simulator's admin API (but the tenants' and the recording's), named
/// `sandbox_` and their operationId.
pub fn read_tools() -> Vec<String> {
    let mut names: Vec<String> = read_operations().iter().map(|s| s.to_string()).collect();
    let spec: Value =
        serde_norway::from_str(include_str!("../../../sim/spec/sandbox.yaml")).unwrap();
    for item in spec["paths"].as_object().unwrap().values() {
        let Some(get) = item.get("get") else { continue };
        let tags = get["tags"].as_array().cloned().unwrap_or_default();
        if tags.iter().any(|t| t == "tenants" || t == "recording") {
            continue;
        }
        names.push(format!("sandbox_{}", get["operationId"].as_str().unwrap()));
    }
    names.sort();
    names
}

/// The URL of a port nothing listens on.
pub fn dead_url() -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", closed.local_addr().unwrap())
}

/// The tool names a `list` step returned, sorted.
pub fn names(step: &Value) -> Vec<String> {
    let mut names: Vec<String> = step
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// `call TOOL ARGS`, as a plan's step.
pub fn call(tool: &str, args: Value) -> Value {
    json!({"do": "call", "tool": tool, "args": args})
}

/// A tool error's structured `error`, asserting the step is one.
#[track_caller]
pub fn error(step: &Value) -> &Value {
    assert_eq!(step["isError"], true, "{step}");
    &step["structured"]["error"]
}
