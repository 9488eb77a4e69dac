//! The state file as a hostile user meets it: a disk that fills up, credentials sent
//! where they do not belong, a log emptied or garbled, seeds and imports too large or
//! breaking the operations' rules.

use licensing_test_support::{process::listening_url, sim as support};

use std::{
    io::Read,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Instant,
};

use licensing_sdk::{ErrorCode, RetryPolicy, order};
use licensing_sim::{DEFAULT_APP_TOKEN, ImportError, Simulator, StateFileError};
use serde_json::{Value, json};
use support::{batch, code_of, new_buy, product};

/// A simulator, with clients, on `state.json` in a directory of its own (named for `name`).
async fn on_state_file(name: &str) -> (tempfile::TempDir, PathBuf, support::Env) {
    let dir = temp_dir(name);
    let path = dir.path().join("state.json");
    let env = support::start_with(Simulator::builder().state_file(&path)).await;
    (dir, path, env)
}

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("licensing-dur-{name}-"))
        .tempdir()
        .unwrap()
}

/// The license orders of the state, by id.
fn orders(sim: &Simulator) -> serde_json::Map<String, Value> {
    sim.export_state()["state"]["orders"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// A disk that is full when a `batchOrder` is recorded: the call is refused with the
/// documented "network exception, retry", nothing of it is applied, and the SDK's retry
/// applies it exactly once, also after a restart from the file.
#[tokio::test]
async fn a_change_that_cannot_be_recorded_is_refused_unapplied_and_applied_once_on_retry() {
    let dir = temp_dir("full");
    let path = dir.path().join("state.json");
    let (builder, writes) = Simulator::builder()
        .state_file(&path)
        .failing_state_writes(0);
    let env = support::start_with(builder).await;
    let ent = env.enterprise("Fulldisk").await;
    let nums = env.allocate(1).await;
    let order = new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{ "assetNos": nums, "products": [product("urn:p:cad", 2)] }]),
    );
    let before = env.sim.export_state();

    // Without retries: refused, and nothing of it applied.
    writes.fail_next(1);
    let refused = env
        .order
        .batch_order()
        .app_key("app")
        .body(batch(vec![order.clone()]))
        .await;
    assert_eq!(code_of(refused), ErrorCode::NetworkException);
    assert_eq!(
        env.sim.export_state(),
        before,
        "a refused change left a trace"
    );

    // With the SDK's own retries, as a partner runs it: one failure, then one order.
    let retrying = order::Client::builder(&env.sim.url())
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::default())
        .build()
        .unwrap();
    writes.fail_next(1);
    let result = retrying
        .batch_order()
        .app_key("app")
        .body(batch(vec![order]))
        .await
        .expect("the retry succeeds");
    assert_eq!(result.len(), 1);
    let after = orders(&env.sim);
    assert_eq!(after.len(), orders(&env.sim).len());
    let new: Vec<_> = after
        .keys()
        .filter(|id| {
            !before["state"]["orders"]
                .as_object()
                .unwrap()
                .contains_key(*id)
        })
        .collect();
    assert_eq!(new.len(), 1, "exactly one order: {new:?}");
    let exported = env.sim.export_state();
    drop(retrying);
    env.stop().await;

    let again = support::start_with(Simulator::builder().state_file(&path)).await;
    assert_eq!(
        again.sim.export_state(),
        exported,
        "the file holds what was acknowledged"
    );
    again.stop().await;
}

/// Every credential a client may put in a query: none reaches the state file, its log
/// or the journal.
#[tokio::test]
async fn credentials_in_a_query_never_reach_the_files_or_the_journal() {
    let (_dir, path, env) = on_state_file("secrets").await;
    let ent = env.enterprise("Secretive").await;
    let secrets = [
        ("appKey", "APPKEY-7f3a91"),
        ("clientToken", "CLIENT-TOKEN-4b2c"),
        ("userToken", "USER-TOKEN-9d1e"),
        ("password", "PASSWORD-55aa"),
        ("token", "TOKEN-0c0c"),
    ];
    let query: String = secrets
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let nums = env.allocate(1).await;
    let order = new_buy(
        &ent,
        "normal_recover_usbkey",
        json!([{ "assetNos": nums, "products": [product("urn:p:cad", 2)] }]),
    );
    let batch_path = support::path("batchOrder", &[]);
    let raw = env
        .raw(
            "POST",
            &format!("{batch_path}?{query}"),
            Some(serde_json::to_value(batch(vec![order])).unwrap()),
        )
        .await;
    assert_eq!(raw.status, 200, "{:?}", raw.body);
    let members = support::path("addMembers", &[&ent.global_id]);
    let raw = env
        .raw(
            "POST",
            &format!("{members}?{query}"),
            Some(
                json!({"userList": [{"userName": "bob", "password": "Secret-123", "name": "Bob"}]}),
            ),
        )
        .await;
    assert_eq!(raw.status, 200, "{:?}", raw.body);
    let list = support::path("listMembers", &[&ent.global_id]);
    env.raw(
        "GET",
        &format!("{list}?pageNum=1&pageSize=10&{query}"),
        None,
    )
    .await;
    let journal = env
        .sim
        .admin()
        .list_journal()
        .send()
        .await
        .unwrap()
        .into_inner();
    let journal = serde_json::to_string(&journal).unwrap();
    let log = std::fs::read(licensing_log(&path)).unwrap();
    let log = String::from_utf8_lossy(&log);
    for (name, secret) in secrets {
        assert!(!log.contains(secret), "{name} in the log");
        assert!(!journal.contains(secret), "{name} in the journal");
    }
    assert!(
        log.contains("[REDACTED]"),
        "the log keeps that an appKey was given"
    );
    env.stop().await;
    // Compacted at the restart: the snapshot too.
    let again = support::start_with(Simulator::builder().state_file(&path)).await;
    let snapshot = std::fs::read_to_string(&path).unwrap();
    for (name, secret) in secrets {
        assert!(!snapshot.contains(secret), "{name} in the state file");
    }
    again.stop().await;
}

fn licensing_log(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".log");
    PathBuf::from(name)
}

/// An emptied or garbled log stops the start, naming the file, where, and the way out;
/// `recover` starts from what is whole and keeps the damaged log aside.
#[tokio::test]
async fn a_damaged_log_is_refused_with_a_way_out() {
    let (_dir, path, env) = on_state_file("damaged").await;
    let ent = env.enterprise("Fragile").await;
    for name in ["ann", "ben", "cid"] {
        env.add_member(&ent, name).await;
    }
    env.allocate(33).await;
    let acknowledged = env.sim.export_state();
    env.stop().await;
    let log = licensing_log(&path);
    let whole = std::fs::read(&log).unwrap();

    let cases: [(&str, Vec<u8>); 3] = [
        ("emptied", Vec::new()),
        (
            "garbage",
            b"\x13\x37 not a log at all, just bytes".repeat(20),
        ),
        ("damaged in the middle", {
            let mut bytes = whole.clone();
            let at = bytes.len() / 2;
            bytes[at] ^= 0xff;
            bytes
        }),
    ];
    for (what, bytes) in cases {
        std::fs::write(&log, &bytes).unwrap();
        let error = Simulator::builder()
            .state_file(&path)
            .start()
            .await
            .expect_err(what);
        let text = error.to_string();
        assert!(
            error.get_ref().is_some_and(|e| e.is::<StateFileError>()),
            "{what}: {text}"
        );
        assert!(
            text.contains("state.json.log"),
            "{what}: names the file: {text}"
        );
        assert!(
            text.contains("--recover"),
            "{what}: gives the way out: {text}"
        );
        if what == "damaged in the middle" {
            assert!(text.contains("at byte"), "{what}: names the offset: {text}");
        }
        assert_eq!(
            std::fs::read(&log).unwrap(),
            bytes,
            "{what}: the log is left as it is"
        );
    }

    // Recovery keeps the snapshot (and what is whole), never hands out a number twice
    // that the snapshot says was handed out, and keeps the damaged log.
    std::fs::write(&log, b"").unwrap();
    let recovered = support::start_with(Simulator::builder().state_file(&path).recover(true)).await;
    let state = recovered.sim.export_state();
    let last = |doc: &Value| doc["allocator"]["last"]["domestic"].as_u64().unwrap();
    assert!(last(&state) <= last(&acknowledged));
    assert!(std::fs::metadata(licensing_log(&path).with_extension("log.damaged")).is_ok());
    recovered.stop().await;
}

/// A seed far past the limit is refused before it is parsed into state, naming the
/// limit and how to raise it; the simulator stays small while refusing it.
#[test]
fn a_huge_seed_is_refused_before_it_is_parsed() {
    let assets: Vec<Value> = (0..50_000)
        .map(|i| {
            json!({"key": format!("a{i}"), "licenseType": "normal_recover_usbkey",
                   "products": [{"productUri": "urn:p:cad", "nodes": 1}]})
        })
        .collect();
    let seed = json!({"enterprises": [{"name": "Huge", "crmCustomerId": "CRM-H",
        "customers": [{"channelCode": "CH01", "channelCustomerId": "CC-H"}],
        "assets": assets, "members": []}]});
    let text = serde_json::to_vec(&seed).unwrap();
    let dir = temp_dir("seed");
    let file = dir.path().join("huge-seed.json");
    std::fs::write(&file, &text).unwrap();

    // At start.
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_licensing-sim"))
        .args(["--addr", "127.0.0.1:0", "--seed"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("--max-seed-bytes"), "{stderr}");
    eprintln!("--seed refused in {:?}", started.elapsed());

    // Through the admin API of a running binary, whose peak memory is read after.
    let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-sim"))
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let url = listening_url(&mut child);
    let http = reqwest::blocking_client();
    let started = Instant::now();
    let (status, body) = http(&format!("{url}/__sandbox/v1/seed"), &text);
    let took = started.elapsed();
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("--max-seed-bytes"), "{body}");
    // A compact seed under the byte limit with too many records is refused by count.
    let small = serde_json::to_vec(&json!({"enterprises": (0..10_001)
        .map(|i| json!({"name": format!("E{i}"), "crmCustomerId": format!("C{i}")}))
        .collect::<Vec<_>>()}))
    .unwrap();
    let (status, body) = http(&format!("{url}/__sandbox/v1/seed"), &small);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("--max-seed-records"), "{body}");
    let peak = peak_rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    eprintln!(
        "a {} MB seed refused in {took:?}; peak resident memory {} MiB",
        text.len() / 1_000_000,
        peak / 1024
    );
    assert!(peak < 100 * 1024, "peak resident memory {peak} KiB");
}

/// The peak resident memory of a process (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let mut status = String::new();
    std::fs::File::open(format!("/proc/{pid}/status"))
        .and_then(|mut f| f.read_to_string(&mut status))
        .unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Blocking HTTP for the binary tests: a POST of a JSON body, its status and body.
mod reqwest {
    pub fn blocking_client() -> impl Fn(&str, &[u8]) -> (u16, String) {
        |url, body| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let response = ::reqwest::Client::new()
                    .post(url)
                    .header("content-type", "application/json")
                    .body(body.to_vec())
                    .timeout(std::time::Duration::from_secs(30))
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                (status, response.text().await.unwrap())
            })
        }
    }
}

/// An import holds nothing the operations would refuse: an employee without a password
/// is named by its path, and nothing changes.
#[tokio::test]
async fn an_import_applies_the_operations_field_rules() {
    let env = support::start().await;
    let ent = env.enterprise("Rules").await;
    let alice = env.add_member(&ent, "alice").await;
    let good = env.sim.export_state();
    for (field, value, code) in [
        ("password", json!(""), "40001"),
        ("password", json!("abc"), "50003"),
        ("name", json!(""), "40022"),
        ("account", json!("not alnum!"), "10003"),
        ("mobile", json!("12"), "10004"),
        ("remark", json!("r".repeat(201)), "30003"),
    ] {
        let mut doc = good.clone();
        doc["state"]["members"][&alice][field] = value;
        let Err(ImportError::Invalid { path, message }) = env.sim.import_state(doc) else {
            panic!("{field}: an import breaking the rule is refused");
        };
        assert_eq!(path, format!("state.members.{alice}.{field}"), "{message}");
        assert!(message.contains(code), "{field}: {message}");
        assert_eq!(env.sim.export_state(), good, "{field}: nothing changed");
    }
    env.stop().await;
}

/// With `LICENSING_SIM_JOURNAL_DIR` set, the binary writes its journal there when it
/// stops (SIGTERM), in the admin API's shape: what `licensing-proxy coverage` reads to
/// measure what a test suite exercised.
#[cfg(unix)]
#[test]
fn a_stopped_simulator_writes_its_journal_where_it_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-sim"))
        .args(["--addr", "127.0.0.1:0"])
        .env(licensing_sim::JOURNAL_DIR_VARIABLE, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let url = listening_url(&mut child);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let reply: Value = runtime.block_on(async {
        ::reqwest::Client::new()
            .post(format!(
                "{url}/order/api/order/v1/shellnums?g_nonce=journal-export-1"
            ))
            .bearer_auth(DEFAULT_APP_TOKEN)
            .json(&json!({"size": 2}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(reply["code"], 0, "{reply}");
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert!(child.wait().unwrap().success());
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let journal: Value = serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    let entries = journal["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{journal}");
    assert_eq!(entries[0]["operation"], "allocateShellNums");
    assert_eq!(entries[0]["code"], "0");
    assert_eq!(entries[0]["requestBody"], json!({"size": 2}));
    dir.close().unwrap();
}
