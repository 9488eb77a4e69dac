//! The `licensing-sim` binary with `--state-file`, killed with SIGKILL at random moments
//! while clients change its state: after each restart the state holds every change that
//! was acknowledged, and of the changes in flight at most what they would have done. Also:
//! a damaged state file or log stops the start, naming the file, and is left as it was;
//! a torn last record is ignored. And the start-up guard of the admin API: a non-loopback
//! address needs `--admin-token` or `--admin-open`.
//!
//! `cargo test -p licensing-sim --release --test crash -- --measure` instead measures the
//! cost of a mutating call at 1,000 and at 100,000 employees, with and without a state
//! file, and prints it.

use licensing_test_support::{
    process::{first_line, stderr_of},
    sim as support,
};

use std::{
    collections::BTreeMap,
    num::NonZeroU32,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use licensing_sdk::{RetryPolicy, member, member::types as mt, order, order::types as ot};
use licensing_sim::{DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN};
use serde_json::json;
use support::Enterprise;

/// Restarts after a kill.
const ITERATIONS: u64 = 20;
/// Clients changing the state at once, each on its own enterprise.
const WORKERS: usize = 3;
const SEED: u64 = 0x5eed_cafe;

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if std::env::args().any(|a| a == "--measure") {
        runtime.block_on(measure());
        return;
    }
    runtime.block_on(kill_at_random_moments());
    damaged_files_stop_the_start();
    runtime.block_on(a_torn_last_record_is_ignored());
    an_open_admin_api_needs_loopback_or_a_flag();
    println!("4 passed, 0 failed");
}

/// xorshift64*: the same moments and operations on every run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("licensing-sim-{name}-"))
        .tempdir()
        .unwrap()
}

/// A running `licensing-sim` and clients for it.
struct Sim {
    child: Child,
    api: Api,
}

/// Clients for both services, which never retry: a call either got its reply or did not.
struct Api {
    order: order::Client,
    member: member::Client,
}

fn command(state: Option<&Path>, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_licensing-sim"));
    command.args(["--addr", "127.0.0.1:0"]);
    if let Some(state) = state {
        command.arg("--state-file").arg(state);
    }
    command
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn clients(url: &str) -> Api {
    let order = order::Client::builder(url)
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let member = member::Client::builder(url)
        .client_token(DEFAULT_CLIENT_TOKEN)
        .user_token(DEFAULT_USER_TOKEN)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    Api { order, member }
}

/// Starts the binary and waits for its `listening on` line.
fn spawn(state: Option<&Path>, extra: &[&str]) -> Sim {
    let mut child = command(state, extra).spawn().unwrap();
    let line = first_line(&mut child);
    let Some(url) = line.trim().strip_prefix("listening on ") else {
        let stderr = stderr_of(&mut child);
        panic!("licensing-sim did not start: {line:?} {stderr}");
    };
    Sim {
        child,
        api: clients(url),
    }
}

impl Sim {
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Api {
    async fn enterprise(&self, name: &str) -> Enterprise {
        support::enterprise(&self.order, name).await
    }

    /// Employees by account (without the enterprise code), with their global ids.
    async fn members(&self, ent: &Enterprise) -> BTreeMap<String, String> {
        let mut all = BTreeMap::new();
        for page in 1u32.. {
            let listed = self
                .member
                .list_members()
                .enterprise_global_id(&ent.global_id)
                .page_num(page)
                .page_size(1000u32)
                .await
                .expect("listMembers");
            for m in &listed.list {
                let account = m.user_name.split('@').next().unwrap().to_string();
                all.insert(account, m.global_id.clone());
            }
            if !listed.has_next_page {
                break;
            }
        }
        all.retain(|account, _| account != "admin" && account != "cloud");
        all
    }

    async fn assets(&self, ent: &Enterprise) -> Vec<String> {
        self.member
            .list_asset_nums()
            .enterprise_global_id(&ent.global_id)
            .await
            .expect("listAssetNums")
            .into_iter()
            .map(|a| a.asset_num)
            .collect()
    }

    async fn allocate(&self, size: u32) -> Result<Vec<String>, licensing_sdk::Error> {
        let numbers = self
            .order
            .allocate_shell_nums()
            .body(ot::AllocateShellNumsRequest::builder().size(NonZeroU32::new(size).unwrap()))
            .await?;
        Ok(numbers.into_iter().map(String::from).collect())
    }
}

/// What a worker knows of a record: a change acknowledged, or one in flight when the
/// simulator was killed (it may or may not have been made).
#[derive(Clone, Debug, PartialEq)]
enum Known {
    Present,
    Absent,
    MaybeAdded,
    MaybeDeleted,
}

/// One client's enterprise and what it was told.
struct Worker {
    ent: Enterprise,
    members: BTreeMap<String, (Known, Option<String>)>,
    assets: BTreeMap<String, Known>,
    /// Numbers allocated and acknowledged, not bought yet.
    unbought: Vec<String>,
    next: u64,
    acknowledged: u64,
}

/// The sequence part of an asset number.
fn sequence(num: &str) -> u64 {
    num[1..].parse().unwrap()
}

impl Worker {
    /// Changes the state until the simulator goes away; returns the highest number it was
    /// handed.
    async fn run(&mut self, sim: &Api, rng: &mut Rng, id: usize) -> u64 {
        let mut highest = 0;
        loop {
            let alive = match rng.below(4) {
                0 | 1 => self.add(sim, rng, id).await,
                2 => self.buy(sim, &mut highest).await,
                _ => self.delete(sim, rng).await,
            };
            if !alive {
                return highest;
            }
            self.acknowledged += 1;
        }
    }

    async fn add(&mut self, sim: &Api, rng: &mut Rng, id: usize) -> bool {
        let names: Vec<String> = (0..1 + rng.below(5))
            .map(|_| {
                self.next += 1;
                format!("w{id}n{}", self.next)
            })
            .collect();
        let users = names
            .iter()
            .map(|n| support::new_member(n, "Secret-123", n))
            .collect::<Vec<_>>();
        let added = sim
            .member
            .add_members()
            .enterprise_global_id(&self.ent.global_id)
            .body(mt::AddMembersRequest::builder().user_list(users))
            .await;
        match added {
            Ok(result) => {
                assert_eq!(result.succeeded.len(), names.len());
                for m in result.succeeded {
                    let account = m.user_name.split('@').next().unwrap().to_string();
                    self.members
                        .insert(account, (Known::Present, Some(m.global_id)));
                }
                true
            }
            Err(e) => {
                assert!(e.code().is_none(), "only the kill fails a call: {e}");
                for n in names {
                    self.members.insert(n, (Known::MaybeAdded, None));
                }
                false
            }
        }
    }

    async fn delete(&mut self, sim: &Api, rng: &mut Rng) -> bool {
        let present: Vec<(String, String)> = self
            .members
            .iter()
            .filter(|(_, (k, _))| *k == Known::Present)
            .filter_map(|(n, (_, id))| Some((n.clone(), id.clone()?)))
            .collect();
        if present.is_empty() {
            return true;
        }
        let (name, id) = &present[rng.below(present.len() as u64) as usize];
        let deleted = sim
            .member
            .delete_member()
            .enterprise_global_id(&self.ent.global_id)
            .member_global_id(id)
            .await;
        let known = match &deleted {
            Ok(()) => Known::Absent,
            Err(e) => {
                assert!(e.code().is_none(), "only the kill fails a call: {e}");
                Known::MaybeDeleted
            }
        };
        self.members.get_mut(name).unwrap().0 = known;
        deleted.is_ok()
    }

    /// Allocates numbers, then buys them in a batch of one order per number.
    async fn buy(&mut self, sim: &Api, highest: &mut u64) -> bool {
        if self.unbought.is_empty() {
            match sim.allocate(3).await {
                Ok(numbers) => {
                    *highest = (*highest).max(numbers.iter().map(|n| sequence(n)).max().unwrap());
                    self.unbought = numbers;
                    return true;
                }
                Err(e) => {
                    assert!(e.code().is_none(), "only the kill fails a call: {e}");
                    return false;
                }
            }
        }
        let numbers = std::mem::take(&mut self.unbought);
        let orders = numbers
            .iter()
            .map(|n| {
                support::new_buy(
                    &self.ent,
                    "normal_recover_usbkey",
                    json!([{ "assetNos": [n], "products": [support::product("cad", 2)] }]),
                )
            })
            .collect();
        let bought = sim
            .order
            .batch_order()
            .app_key("crash-test")
            .body(support::batch(orders))
            .await;
        let known = match &bought {
            Ok(_) => Known::Present,
            Err(e) => {
                assert!(e.code().is_none(), "only the kill fails a call: {e}");
                Known::MaybeAdded
            }
        };
        for n in numbers {
            self.assets.insert(n, known.clone());
        }
        bought.is_ok()
    }

    /// Checks the restarted simulator against what was acknowledged, and settles what
    /// was in flight by what the simulator holds.
    async fn check(&mut self, sim: &Api, iteration: u64) {
        let listed = sim.members(&self.ent).await;
        for (name, (known, id)) in &mut self.members {
            let there = listed.get(name);
            match (&*known, there) {
                (Known::Present, Some(_)) | (Known::Absent, None) => {}
                (Known::MaybeAdded | Known::MaybeDeleted, Some(global)) => {
                    *known = Known::Present;
                    *id = Some(global.clone());
                }
                (Known::MaybeAdded | Known::MaybeDeleted, None) => *known = Known::Absent,
                (known, there) => panic!(
                    "iteration {iteration}: employee {name} was acknowledged {known:?}, the restarted simulator has {there:?}"
                ),
            }
        }
        for name in listed.keys() {
            assert!(
                self.members.contains_key(name),
                "iteration {iteration}: employee {name} was never added"
            );
        }
        let listed = sim.assets(&self.ent).await;
        for (num, known) in &mut self.assets {
            let there = listed.contains(num);
            match (&*known, there) {
                (Known::Present, true) => {}
                (Known::MaybeAdded, true) => *known = Known::Present,
                (Known::MaybeAdded, false) => {
                    // Never bought: buy it again later.
                    *known = Known::Absent;
                    self.unbought.push(num.clone());
                }
                (known, there) => panic!(
                    "iteration {iteration}: asset {num} was acknowledged {known:?}, listed: {there}"
                ),
            }
        }
        self.assets.retain(|_, k| *k == Known::Present);
        for num in &listed {
            assert!(
                self.assets.contains_key(num),
                "iteration {iteration}: asset {num} was never bought"
            );
        }
    }
}

async fn kill_at_random_moments() {
    let dir = temp_dir("crash");
    let state = dir.path().join("state.json");
    // A small log limit: the log is compacted every few calls, so kills land in
    // compactions too.
    let args = [
        "--state-log-limit",
        "20000",
        "--trial-member-limit",
        "1000000",
    ];
    let sim = spawn(Some(&state), &args);
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        workers.push(Worker {
            ent: sim.api.enterprise(&format!("Crash{w}")).await,
            members: BTreeMap::new(),
            assets: BTreeMap::new(),
            unbought: Vec::new(),
            next: 0,
            acknowledged: 0,
        });
    }
    let mut rng = Rng::new(SEED);
    let mut sim = Some(sim);
    let mut highest_acknowledged = 0;
    for iteration in 0..ITERATIONS {
        let Sim { mut child, api } = sim.take().unwrap();
        let delay = Duration::from_millis(20 + rng.below(300));
        let killer = std::thread::spawn(move || {
            std::thread::sleep(delay);
            child.kill().unwrap();
            child.wait().unwrap();
        });
        let mut seeds: Vec<Rng> = (0..WORKERS)
            .map(|w| Rng::new(SEED ^ (iteration << 8) ^ w as u64))
            .collect();
        let highest = futures_util::future::join_all(
            workers
                .iter_mut()
                .zip(&mut seeds)
                .enumerate()
                .map(|(w, (worker, rng))| worker.run(&api, rng, w)),
        )
        .await;
        killer.join().unwrap();
        highest_acknowledged = highest.into_iter().fold(highest_acknowledged, u64::max);

        // Now and then the restart itself is killed, while it loads and compacts.
        if iteration % 4 == 3 {
            let mut child = command(Some(&state), &args).spawn().unwrap();
            std::thread::sleep(Duration::from_millis(rng.below(30)));
            child.kill().unwrap();
            child.wait().unwrap();
        }
        let restarted = spawn(Some(&state), &args);
        for worker in &mut workers {
            worker.check(&restarted.api, iteration).await;
        }
        let next = restarted.api.allocate(1).await.expect("allocateShellNums");
        assert!(
            sequence(&next[0]) > highest_acknowledged,
            "iteration {iteration}: {} handed out again (up to {highest_acknowledged} were acknowledged)",
            next[0]
        );
        highest_acknowledged = sequence(&next[0]);
        sim = Some(restarted);
    }
    let acknowledged: u64 = workers.iter().map(|w| w.acknowledged).sum();
    let employees: usize = workers
        .iter()
        .map(|w| {
            w.members
                .values()
                .filter(|(k, _)| *k == Known::Present)
                .count()
        })
        .sum();
    assert!(
        acknowledged > 100,
        "the kills came too early: {acknowledged} calls"
    );
    eprintln!("{ITERATIONS} kills: {acknowledged} acknowledged calls kept, {employees} employees");
    sim.unwrap().kill();
    dir.close().unwrap();
}

/// Runs the binary on a state file that must be refused; returns its error output.
fn refused(state: &Path) -> String {
    let output = command(Some(state), &[]).output().unwrap();
    assert!(!output.status.success(), "started on a bad state file");
    assert!(output.stdout.is_empty(), "it never listened");
    String::from_utf8(output.stderr).unwrap()
}

fn damaged_files_stop_the_start() {
    let dir = temp_dir("damaged");
    let state = dir.path().join("state.json");

    for (content, problem) in [
        (&b"{\"version\": 1, \"state\": {"[..], "not a JSON object"),
        (b"garbage", "not a JSON object"),
        (b"{\"version\": 7}", "version: unsupported version 7"),
        (
            b"{\"version\": 1, \"state\": {\"members\": {\"MG-1\": 5}}}",
            "state.members.MG-1: invalid type",
        ),
    ] {
        std::fs::write(&state, content).unwrap();
        let stderr = refused(&state);
        assert!(
            stderr.contains(&format!("{}: not a usable state", state.display()))
                && stderr.contains(problem),
            "{stderr}"
        );
        assert_eq!(std::fs::read(&state).unwrap(), content, "left as it was");
        assert!(!dir.path().join("state.json.log").exists());
    }

    // A log whose first call record is damaged, with more after it.
    std::fs::remove_file(&state).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let sim = spawn(Some(&state), &[]);
    runtime.block_on(async {
        sim.api.enterprise("Damaged").await;
        sim.api.allocate(1).await.unwrap();
    });
    sim.kill();
    let log = dir.path().join("state.json.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let header = 8 + u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
    bytes[header + 20] ^= 0x20;
    std::fs::write(&log, &bytes).unwrap();
    let snapshot = std::fs::read(&state).unwrap();
    let stderr = refused(&state);
    assert!(
        stderr.contains(&format!(
            "{}: record 2 at byte {header} is damaged",
            log.display()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), bytes, "left as it was");
    assert_eq!(std::fs::read(&state).unwrap(), snapshot, "left as it was");

    // A log without its state file.
    std::fs::remove_file(&state).unwrap();
    let stderr = refused(&state);
    assert!(stderr.contains("a log without its state file"), "{stderr}");
    dir.close().unwrap();
}

async fn a_torn_last_record_is_ignored() {
    let dir = temp_dir("torn");
    let state = dir.path().join("state.json");
    let log = dir.path().join("state.json.log");
    let sim = spawn(Some(&state), &[]);
    let ent = sim.api.enterprise("Torn").await;
    sim.api.allocate(2).await.unwrap();
    let before = sim.api.members(&ent).await;
    sim.kill();
    let whole = std::fs::read(&log).unwrap();
    // A record cut short, then one whose bytes never reached the disk (zeros).
    let last = {
        let mut pos = 0;
        let mut last = 0;
        while pos < whole.len() {
            last = pos;
            pos += 8 + u32::from_le_bytes(whole[pos..pos + 4].try_into().unwrap()) as usize;
        }
        last
    };
    for tail in [whole[last..whole.len() - 3].to_vec(), vec![0; 40], vec![7]] {
        let mut bytes = whole.clone();
        bytes.extend_from_slice(&tail);
        std::fs::write(&log, &bytes).unwrap();
        let sim = spawn(Some(&state), &[]);
        assert_eq!(sim.api.members(&ent).await, before);
        assert_eq!(sim.api.allocate(1).await.unwrap(), ["8000000003"]);
        sim.kill();
    }
    dir.close().unwrap();
}

/// Adds `count` employees in batches of 100 and returns the mean time of the calls
/// that took it from `from` to `count` employees, and the slowest one.
async fn add_employees(
    sim: &Api,
    ent: &Enterprise,
    start: usize,
    count: usize,
    from: usize,
) -> (Duration, Duration) {
    let mut timed = Vec::new();
    for batch in (start..count).step_by(100) {
        let users: Vec<_> = (batch..batch + 100)
            .map(|i| support::new_member(&format!("e{i}"), "Secret-123", "Employee"))
            .collect();
        let t = Instant::now();
        sim.member
            .add_members()
            .enterprise_global_id(&ent.global_id)
            .body(mt::AddMembersRequest::builder().user_list(users))
            .await
            .expect("addMembers");
        if batch >= from {
            timed.push(t.elapsed());
        }
    }
    let mean = timed.iter().sum::<Duration>() / timed.len().max(1) as u32;
    (mean, timed.into_iter().max().unwrap_or_default())
}

async fn measure() {
    for with_file in [false, true] {
        let dir = temp_dir("measure");
        let state = dir.path().join("state.json");
        let limit = ["--trial-member-limit", "1000000"];
        let sim = spawn(with_file.then_some(state.as_path()), &limit);
        let ent = sim.api.enterprise("Measure").await;
        let (small, small_max) = add_employees(&sim.api, &ent, 0, 1_000, 0).await;
        add_employees(&sim.api, &ent, 1_000, 99_000, 99_000).await;
        let (large, large_max) = add_employees(&sim.api, &ent, 99_000, 100_000, 99_000).await;
        let files = if with_file {
            let log = std::fs::metadata(dir.path().join("state.json.log"))
                .unwrap()
                .len();
            sim.kill();
            // The start replays the whole log, then writes the snapshot: a compaction.
            let t = Instant::now();
            let replayed = spawn(Some(&state), &limit);
            let replay = t.elapsed();
            replayed.kill();
            let t = Instant::now();
            let loaded = spawn(Some(&state), &limit);
            let load = t.elapsed();
            let snapshot = std::fs::metadata(&state).unwrap().len();
            loaded.kill();
            format!(
                "; log {} KB; restart replaying it {replay:.2?}, snapshot {} MB; \
                 restart from the snapshot {load:.2?}",
                log / 1_000,
                snapshot / 1_000_000
            )
        } else {
            sim.kill();
            String::new()
        };
        println!(
            "{}: addMembers of 100, mean (max) per call: first 1,000 employees {small:.2?} ({small_max:.2?}), \
             from 99,000 to 100,000 {large:.2?} ({large_max:.2?}){files}",
            if with_file {
                "with --state-file"
            } else {
                "in memory only"
            },
        );
        dir.close().unwrap();
    }
}

/// Listening where other machines may connect, the admin API (which can reset and import
/// the state) needs a token, or `--admin-open` to be served open on purpose.
fn an_open_admin_api_needs_loopback_or_a_flag() {
    let run = |extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_licensing-sim"));
        command
            .args(["--addr", "0.0.0.0:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("licensing-sim starts");
        let line = first_line(&mut child);
        let _ = child.kill();
        let status = child.wait().unwrap();
        let stderr = stderr_of(&mut child);
        (line, status, stderr)
    };
    let (line, status, stderr) = run(&[]);
    assert!(line.is_empty(), "started: {line}");
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--admin-token") && stderr.contains("--admin-open"),
        "{stderr}"
    );
    for flags in [&["--admin-token", "a-secret"][..], &["--admin-open"]] {
        let (line, _, stderr) = run(flags);
        assert!(
            line.starts_with("listening on http://0.0.0.0:"),
            "{flags:?}: {line} {stderr}"
        );
    }
}
