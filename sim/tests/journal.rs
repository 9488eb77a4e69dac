//! The journal outside the simulator: the files `LICENSING_SIM_JOURNAL_DIR` gets, met as
//! a hostile local user would (links and directories planted where the file goes,
//! directories that cannot be written), and what a journal keeps of a batch too large to
//! keep whole.

use licensing_test_support::{process::listening_url, sim as support};

use std::{
    fs,
    io::{Read, Write},
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
};

use licensing_sdk::{operations, order::types as ot};
use licensing_sim::{DEFAULT_APP_TOKEN, JOURNAL_DIR_VARIABLE, Simulator};
use serde_json::{Value, json};

/// The `licensing-sim` binary, started with its journal directory set.
struct Running {
    child: Child,
    addr: String,
    pid: u32,
    port: u16,
}

fn start(dir: &Path) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-sim"))
        .args(["--addr", "127.0.0.1:0"])
        .env(JOURNAL_DIR_VARIABLE, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = listening_url(&mut child);
    let addr = url.strip_prefix("http://").unwrap_or(&url).to_string();
    let port = addr.rsplit_once(':').unwrap().1.parse().unwrap();
    let pid = child.id();
    Running {
        child,
        addr,
        pid,
        port,
    }
}

impl Running {
    /// One `allocateShellNums` over a socket of its own, answered with success: something
    /// for the journal to hold.
    fn call(&self) {
        let body = br#"{"size":1}"#;
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        write!(
            stream,
            "POST {}?g_nonce=journal-{} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {DEFAULT_APP_TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            operations::ALLOCATE_SHELL_NUMS.path,
            self.port,
            self.addr,
            body.len()
        )
        .unwrap();
        stream.write_all(body).unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(reply.contains(r#""code":0"#), "{reply}");
    }

    /// Stopped as a terminal or a service manager stops it (SIGTERM).
    fn stop(self) -> Output {
        let pid = rustix::process::Pid::from_raw(self.pid as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        self.child.wait_with_output().unwrap()
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Whether `name` is `journal-PID-RANDOM-PORT.json` with 16 hexadecimal digits of random.
fn is_journal_name(name: &str, pid: u32, port: u16) -> bool {
    name.strip_prefix(&format!("journal-{pid}-"))
        .and_then(|rest| rest.strip_suffix(&format!("-{port}.json")))
        .is_some_and(|random| random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The names an attacker can know before the simulator starts, or guess: the old
/// `journal-PID-N-PORT.json` for the first simulators of the process, and the new shape
/// with a guessed random part (the file's and its temporary name's).
fn planted_names(pid: u32, port: u16) -> Vec<String> {
    let mut names: Vec<String> = (0..8)
        .map(|n| format!("journal-{pid}-{n}-{port}.json"))
        .collect();
    for guess in ["0000000000000000", "ffffffffffffffff", "0123456789abcdef"] {
        let name = format!("journal-{pid}-{guess}-{port}.json");
        names.push(format!(".{name}.tmp"));
        names.push(name);
    }
    names
}

/// Links planted at every name that can be known or guessed are left as they are, their
/// targets unchanged; the journal is a new regular file of its own name, readable by its
/// owner only, whole.
#[cfg(unix)]
#[test]
fn planted_links_are_not_followed_and_the_journal_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("journals");
    fs::create_dir(&dir).unwrap();
    let sim = start(&dir);
    let planted = planted_names(sim.pid, sim.port);
    for (i, name) in planted.iter().enumerate() {
        let target = tmp.path().join(format!("target-{i}"));
        fs::write(&target, "unchanged").unwrap();
        std::os::unix::fs::symlink(&target, dir.join(name)).unwrap();
    }
    sim.call();
    let (pid, port) = (sim.pid, sim.port);
    let out = sim.stop();
    assert!(out.status.success(), "{out:?}");
    for (i, name) in planted.iter().enumerate() {
        let target = tmp.path().join(format!("target-{i}"));
        assert_eq!(fs::read_to_string(&target).unwrap(), "unchanged", "{name}");
        assert!(fs::symlink_metadata(dir.join(name)).unwrap().is_symlink());
    }
    let new: Vec<String> = names(&dir)
        .into_iter()
        .filter(|n| !planted.contains(n))
        .collect();
    let [journal] = &new[..] else {
        panic!("one journal and nothing else beside the planted links: {new:?}");
    };
    assert!(is_journal_name(journal, pid, port), "{journal}");
    let meta = fs::symlink_metadata(dir.join(journal)).unwrap();
    assert!(meta.is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let journal: Value = serde_json::from_slice(&fs::read(dir.join(journal)).unwrap()).unwrap();
    assert_eq!(journal["entries"][0]["operation"], "allocateShellNums");
}

/// A directory planted at the name the journal used to take (which lost the journal
/// without a word) takes nothing from it now: the journal is written under its own name.
#[cfg(unix)]
#[test]
fn a_directory_at_a_known_name_does_not_lose_the_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = start(tmp.path());
    let planted = planted_names(sim.pid, sim.port);
    for name in &planted {
        fs::create_dir(tmp.path().join(name)).unwrap();
    }
    sim.call();
    let (pid, port) = (sim.pid, sim.port);
    let out = sim.stop();
    assert!(out.status.success(), "{out:?}");
    let journals: Vec<String> = names(tmp.path())
        .into_iter()
        .filter(|n| is_journal_name(n, pid, port) && !planted.contains(n))
        .collect();
    assert_eq!(journals.len(), 1, "{:?}", names(tmp.path()));
}

/// A directory the journal cannot be written in fails the exit, with one line on stderr
/// naming the path: under a file, a file itself, and a directory the kernel makes no file
/// in (even for root).
#[cfg(unix)]
#[test]
fn an_unwritable_directory_fails_the_exit_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    fs::write(&file, "not a directory").unwrap();
    let mut cases = vec![
        ("under a file", file.join("journals")),
        ("a file itself", file.clone()),
    ];
    if cfg!(target_os = "linux") {
        cases.push(("a directory no file can be made in", PathBuf::from("/sys")));
    }
    for (case, dir) in cases {
        let sim = start(&dir);
        sim.call();
        let out = sim.stop();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{case}: {out:?}");
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("licensing-sim:"))
            .collect();
        let [line] = &lines[..] else {
            panic!("{case}: one line: {stderr} ({:?})", out.status);
        };
        assert!(line.contains("journal"), "{case}: {line}");
        assert!(line.contains(dir.to_str().unwrap()), "{case}: {line}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "not a directory");
    }
}

/// Set in the child process [`the_library_returns_the_error_and_drop_prints_it`] runs.
const CHILD: &str = "LICENSING_SIM_TEST_JOURNAL_CHILD";

/// The library, in a process of its own with the variable naming a file: `shutdown`
/// returns the error naming the path, and a simulator dropped prints it on stderr, one
/// line. (The variable is read from the process's environment, so the test runs itself
/// again with it set rather than set it among threads.)
#[test]
fn the_library_returns_the_error_and_drop_prints_it() {
    if let Some(path) = std::env::var_os(CHILD) {
        return library_child(Path::new(&path));
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    fs::write(&file, "").unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "the_library_returns_the_error_and_drop_prints_it",
            "--exact",
            "--nocapture",
        ])
        .env(JOURNAL_DIR_VARIABLE, &file)
        .env(CHILD, &file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the child ran: {stdout}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("journal")).collect();
    let [line] = &lines[..] else {
        panic!("one line from the dropped simulator: {stderr}");
    };
    assert!(
        line.starts_with("licensing-sim: the journal cannot be written to")
            && line.contains(&format!("{file:?}")),
        "{line}"
    );
}

fn library_child(file: &Path) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let call = |sim: &Simulator| {
            let url = format!(
                "{}{}?g_nonce=child-{}",
                sim.url(),
                operations::ALLOCATE_SHELL_NUMS.path,
                sim.addr().port()
            );
            async move {
                let reply = reqwest::Client::new()
                    .post(url)
                    .bearer_auth(DEFAULT_APP_TOKEN)
                    .json(&json!({"size": 1}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(reply.status(), 200);
            }
        };
        let sim = Simulator::start().await.unwrap();
        call(&sim).await;
        let e = sim.shutdown().await.unwrap_err();
        assert!(e.to_string().contains(&format!("{file:?}")), "{e}");
        // Nothing journaled, nothing to write: no error.
        Simulator::start().await.unwrap().shutdown().await.unwrap();
        let dropped = Simulator::start().await.unwrap();
        call(&dropped).await;
        drop(dropped);
    });
}

/// A 500-order batch (`licensing orders submit`'s default) is over the 64 KiB the journal
/// keeps of a body; read back over the admin API, its entry still says which batch it was
/// and what it applied, and nothing else of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_read_after_a_500_order_batch_holds_its_channel_order_id() {
    let env = support::start().await;
    let ent = env.enterprise("Acme").await;
    let nums = env.allocate(500).await;
    let orders: Vec<Value> = nums
        .iter()
        .enumerate()
        .map(|(i, num)| {
            let mut order = support::new_buy(
                &ent,
                "normal_recover_usbkey",
                json!([{"assetNos": [num], "products": [support::product("gms-1", 1)]}]),
            );
            order["sequence"] = json!(i + 1);
            order
        })
        .collect();
    let batch: ot::BatchOrderRequest = serde_json::from_value(json!({
        "channelCode": "CH01",
        "channelOrderId": "CO-500",
        "syncMode": "sync",
        "orderList": orders,
    }))
    .unwrap();
    let size = serde_json::to_vec(&batch).unwrap().len();
    assert!(
        size > 64 * 1024,
        "{size} bytes: over what the journal keeps"
    );
    let applied = env.batch_order(batch).await;
    assert_eq!(applied.len(), 500);
    let journal = env.sim.admin().list_journal().send().await.unwrap();
    let entry = journal
        .entries
        .iter()
        .find(|e| e.operation.as_deref() == Some("batchOrder"))
        .expect("the batch journaled");
    let body = entry.request_body.as_ref().unwrap();
    assert!(body["omitted"].as_u64().unwrap() > 64 * 1024, "{body}");
    let summary = &body["summary"];
    assert_eq!(summary["channelOrderId"], "CO-500");
    assert_eq!(summary["channelCode"], "CH01");
    let list = summary["orderList"].as_array().unwrap();
    assert_eq!(list.len(), 500);
    assert_eq!(
        list[499],
        json!({
            "sequence": 500,
            "customerId": ent.customer_id,
            "channelCustomerId": ent.channel_customer_id,
            "enterpriseGlobalId": ent.global_id,
            "orderType": "new_buy",
            "assets": [{"assetNos": [nums[499]]}],
        })
    );
    assert!(summary.get("syncMode").is_none());
    env.sim.shutdown().await.unwrap();
}
