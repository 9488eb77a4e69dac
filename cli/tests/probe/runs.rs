//! Whole runs against the simulator: the plan, the default tier, the writes, the budget,
//! a departing simulator compared with a conforming one, the irreversible tier.

use serde_json::{Value, json};

use super::{Sim, common, ledger, outcome, report, undone_once, verdicts, with_verdict};

#[test]
fn the_plan_is_printed_and_nothing_is_sent() {
    let sim = Sim::start();
    let output = sim
        .probe()
        .args(["--plan", "--writes", "-o", "json"])
        .output()
        .unwrap();
    common::assert_success(&output, "--plan");
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    let plan = plan.as_array().unwrap();
    assert!(plan.len() > 20, "{plan:#?}");
    for check in plan {
        assert!(!check["sources"].as_array().unwrap().is_empty(), "{check}");
        assert!(
            check["id"].is_string() && check["tier"].is_string(),
            "{check}"
        );
    }
    let tiers: Vec<&str> = plan.iter().map(|c| c["tier"].as_str().unwrap()).collect();
    assert!(tiers.contains(&"write") && !tiers.contains(&"irreversible"));
    assert!(sim.journal().is_empty(), "{:#?}", sim.journal());
    // Without a URL or a token the plan prints all the same.
    let bare = std::process::Command::new(assert_cmd::cargo::cargo_bin("licensing"))
        .args(["probe", "--plan", "-o", "table"])
        .env("LICENSING_CONFIG_DIR", sim.dir.path())
        .env_remove("LICENSING_ORDER_URL")
        .output()
        .unwrap();
    assert!(bare.status.success());
    let text = String::from_utf8(bare.stdout).unwrap();
    assert!(
        text.contains("| `member.nonce.replayed` | refusal |"),
        "{text}"
    );
    assert!(text.contains("random string against replay"), "{text}");
}

#[test]
fn the_default_tier_changes_nothing_and_finds_the_simulator_as_documented() {
    let sim = Sim::start();
    let before = sim.state();
    let (har, junit) = (sim.path("run.har"), sim.path("run.xml"));
    let output = sim
        .probe()
        .args(sim.ids())
        .args(["-o", "json", "--har"])
        .arg(&har)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    let (report, code) = report(&output);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(sim.state(), before, "the default tier changed the state");
    let journal = sim.journal();
    assert!(journal.len() > 20, "{journal:#?}");
    for entry in &journal {
        assert_eq!(entry["method"], "GET", "{entry}");
    }
    // Every check ran on the simulator and found it as documented.
    let departs = with_verdict(&report, "departs");
    let not_run = with_verdict(&report, "not_run");
    assert!(
        departs.is_empty() && not_run.is_empty(),
        "{departs:?} {not_run:?}"
    );
    for id in [
        "listMembers.reply",
        "listMembers.paging",
        "member.auth.usertoken-wrong",
        "member.nonce.replayed",
        "order.nonce.replayed",
        "listVirtualAssets.content-type-required",
        "listAssetProducts.reply",
    ] {
        assert!(verdicts(&report).iter().any(|(i, _)| i == id), "{id}");
    }
    // The refusals reached the simulator as refusals: a business code, never a success.
    let refused = journal.iter().filter(|e| e["code"] != "0").count();
    assert!(refused >= 14, "{refused} refused of {}", journal.len());
    // No token in the report or the recording.
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &std::fs::read_to_string(&har).unwrap();
    for token in [
        licensing_sim::DEFAULT_APP_TOKEN,
        licensing_sim::DEFAULT_CLIENT_TOKEN,
        licensing_sim::DEFAULT_USER_TOKEN,
    ] {
        assert!(!text.contains(token), "a token in the output");
    }
    // The recording reads as the coverage report reads the proxy's.
    let mut exchanges = Vec::new();
    licensing_coverage::exchange::read_from(
        "run.har",
        std::fs::File::open(&har).unwrap(),
        &licensing_coverage::exchange::Limits::default(),
        &mut |x| exchanges.push(x),
    )
    .unwrap();
    assert_eq!(exchanges.len(), journal.len());
    let coverage = licensing_coverage::Report::new(
        &licensing_coverage::Catalogue::documents().unwrap(),
        &exchanges,
    );
    assert_eq!(coverage.totals.operations.seen, 6, "{:#?}", coverage.totals);
    // And as `licensing-proxy seed from-recording` reads one: a seed of the enterprise the
    // run read, with the assets it listed.
    let seed = licensing_proxy::tools::seed_from_recording(&har).unwrap();
    let enterprise = &seed.enterprises[..];
    assert_eq!(enterprise.len(), 1, "{seed:?}");
    assert!(
        enterprise[0]
            .assets
            .iter()
            .any(|a| a.key.as_str() == "8000000001"),
        "{seed:?}"
    );
    let junit = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let cases = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .count();
    assert_eq!(cases, verdicts(&report).len());
}

#[test]
fn writes_are_undone_within_the_allow_list_and_the_budget() {
    let sim = Sim::start();
    let before = sim.state();
    let ledger_path = sim.path("run.ledger");
    let enterprise = sim.enterprise();
    let lock = sim.refillable_lock();
    let output = sim.writes_run(&lock, &ledger_path);
    let (report, code) = report(&output);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(sim.state(), before, "the writes were not all undone");
    let records = ledger(&ledger_path);
    undone_once(&records);
    let intents = records.iter().filter(|r| r["event"] == "intent").count();
    assert_eq!(intents, 3, "{records:#?}");
    assert_eq!(
        with_verdict(&report, "as_documented")
            .iter()
            .filter(|id| id.starts_with("member.employee") || id.starts_with("order.lock"))
            .count(),
        3,
        "{report:#}"
    );
    // The simulator lists no refillable lock among virtual assets, so the round trip
    // cannot read it as enabled first, and says so.
    let round = outcome(&report, "order.lock.round-trip");
    assert_eq!(round["verdict"], "not_run");
    assert!(
        round["why"].as_str().unwrap().contains("read as enabled"),
        "{round}"
    );
    // Every write went to the allow-listed enterprise, or to a lock number of the
    // probe's own.
    for entry in sim.journal().iter().filter(|e| e["method"] != "GET") {
        let path = entry["path"].as_str().unwrap();
        let body = entry["requestBody"].to_string();
        assert!(
            path.contains(&enterprise) || body.contains("probe-no-such-lock-"),
            "a write outside the allow-list: {entry}"
        );
    }
}

#[test]
fn max_writes_is_never_exceeded() {
    let sim = Sim::start();
    let before = sim.state();
    let ledger_path = sim.path("run.ledger");
    let output = sim
        .probe()
        .args(sim.ids())
        .args(["--writes", "--max-writes", "1", "-o", "json", "--ledger"])
        .arg(&ledger_path)
        .output()
        .unwrap();
    let (report, code) = report(&output);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(sim.state(), before);
    let records = ledger(&ledger_path);
    assert_eq!(records.iter().filter(|r| r["event"] == "intent").count(), 1);
    undone_once(&records);
    // One write, and no undo but of it: the made-up lock's disable, which changed nothing.
    let writes: Vec<Value> = sim
        .journal()
        .into_iter()
        .filter(|e| e["method"] != "GET")
        .collect();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    let spent = report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["why"].as_str().unwrap().contains("--max-writes"))
        .count();
    assert_eq!(spent, 2, "{report:#}");
}

#[test]
fn a_departing_simulator_is_reported_by_its_checks_and_compared_as_exactly_those() {
    let conforming = Sim::start();
    let departing = Sim::start();
    departing.fault(
        json!({"operation": "listAssetNums", "fault": {"kind": "patch",
        "patch": [{"op": "remove", "path": "/data/0/assetNum"}]}}),
    );
    departing.fault(
        json!({"operation": "listLentLocks", "fault": {"kind": "patch",
        "patch": [{"op": "replace", "path": "/code", "value": "99999"}]}}),
    );
    departing.fault(
        json!({"operation": "listAssetProducts", "fault": {"kind": "status", "status": 503}}),
    );
    let output = departing
        .probe()
        .args(departing.ids())
        .args(["-o", "json", "--compare-with", &conforming.sim.url()])
        .output()
        .unwrap();
    let (report, code) = report(&output);
    assert_eq!(code, Some(1), "{report:#}");
    let mut departs = with_verdict(&report, "departs");
    departs.sort();
    let expected = [
        "listAssetNums.reply",
        "listAssetProducts.reply",
        "listLentLocks.reply",
    ];
    assert_eq!(departs, expected, "{report:#}");
    let why = |id: &str| outcome(&report, id)["why"].as_str().unwrap().to_string();
    assert!(
        why("listAssetNums.reply").contains("`assetNum` is missing"),
        "{}",
        why("listAssetNums.reply")
    );
    assert!(why("listLentLocks.reply").contains("99999"));
    assert!(why("listAssetProducts.reply").contains("HTTP 503"));
    // The exact request and reply of a departure are in the report.
    let exchange = &outcome(&report, "listLentLocks.reply")["exchanges"][0];
    assert!(
        exchange["url"]
            .as_str()
            .unwrap()
            .contains("/borrowUsbKeys?g_nonce="),
        "{exchange}"
    );
    assert!(
        exchange["replyBody"]
            .as_str()
            .unwrap()
            .contains("\"99999\""),
        "{exchange}"
    );
    let mut differing: Vec<&str> = report["comparison"]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["check"].as_str().unwrap())
        .collect();
    differing.sort_unstable();
    assert_eq!(differing, expected);
}

#[test]
fn irreversible_writes_only_against_a_simulator() {
    let sim = Sim::start();
    let ledger_path = sim.path("run.ledger");
    let output = sim
        .probe()
        .args(sim.ids())
        .args(["--irreversible", "-o", "json", "--ledger"])
        .arg(&ledger_path)
        .output()
        .unwrap();
    let (report, code) = report(&output);
    assert_eq!(code, Some(0), "{report:#}");
    assert!(with_verdict(&report, "as_documented").contains(&"order.shellnums.digits".to_string()));
    // Not a simulator: refused before anything but the admin API's clock is asked.
    let server = licensing_test_support::raw::RawServer::start(|mut stream, _| {
        use std::io::Write as _;
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
    let output = sim
        .probe()
        .args(sim.ids())
        .args(["--irreversible", "--ledger"])
        .arg(sim.path("other.ledger"))
        .env("LICENSING_ORDER_URL", &server.url)
        .env("LICENSING_MEMBER_URL", &server.url)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("only against a simulator"));
    assert_eq!(server.requests(), 1);
    assert!(!sim.path("other.ledger").exists());
}

#[test]
fn a_lock_listed_as_enabled_is_disabled_and_enabled_again() {
    let sim = Sim::start();
    let lock = sim.refillable_lock();
    // The simulator lists cloud licenses alone among the virtual assets; a rule lists the
    // lock there too, enabled, as a deployment that lists its locks does. The list then
    // keeps saying enabled after the disable, which the round trip reports.
    let raw = licensing_spec::raw(licensing_sdk::operations::Service::Order.openapi()).unwrap();
    let mut listed = raw
        .pointer("/components/schemas/ListVirtualAssetsReply/example/data/0")
        .unwrap()
        .clone();
    listed["assetNum"] = json!(lock);
    listed["locked"] = json!(false);
    sim.fault(
        json!({"operation": "listVirtualAssets", "fault": {"kind": "patch",
        "patch": [{"op": "add", "path": "/data/-", "value": listed}]}}),
    );
    let before = sim.state();
    let ledger_path = sim.path("run.ledger");
    let output = sim.writes_run(&lock, &ledger_path);
    let (report, code) = report(&output);
    assert_eq!(code, Some(1), "{report:#}");
    let round = outcome(&report, "order.lock.round-trip").clone();
    assert_eq!(round["verdict"], "departs", "{round}");
    assert!(
        round["why"].as_str().unwrap().contains("status 1"),
        "{round}"
    );
    assert_eq!(sim.state(), before, "the lock was not enabled again");
    let records = ledger(&ledger_path);
    undone_once(&records);
    let disabled: Vec<&Value> = records
        .iter()
        .filter(|r| r["event"] == "intent" && r["write"]["kind"] == "disableLock")
        .collect();
    assert_eq!(disabled.len(), 1, "{records:#?}");
    assert_eq!(disabled[0]["write"]["asset"], json!(lock));
}

#[test]
fn a_refusal_answered_as_a_success_stops_the_refusals() {
    // A deployment that answers every request with success, the ones it should refuse too.
    let server = licensing_test_support::raw::RawServer::start(|mut stream, _request| {
        let body = json!({"code": 0, "message": "success", "data": []}).to_string();
        let _ = std::io::Write::write_all(
            &mut stream,
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    });
    let sim = Sim::start();
    let output = sim
        .probe()
        .args(sim.ids())
        .args(["-o", "json"])
        .env("LICENSING_ORDER_URL", &server.url)
        .env("LICENSING_MEMBER_URL", &server.url)
        .output()
        .unwrap();
    let (report, code) = report(&output);
    assert_eq!(code, Some(1), "{report:#}");
    let outcomes = report["outcomes"].as_array().unwrap();
    let first = outcomes
        .iter()
        .position(|o| o["tier"] == "refusal")
        .unwrap_or_else(|| panic!("no refusal in the plan: {report:#}"));
    assert_eq!(outcomes[first]["verdict"], "departs", "{report:#}");
    let accepted = outcomes[first]["id"].as_str().unwrap();
    // Every refusal after it is not sent, naming it.
    let later: Vec<&Value> = outcomes[first + 1..]
        .iter()
        .filter(|o| o["tier"] == "refusal")
        .collect();
    assert!(later.len() > 5, "{report:#}");
    for o in later {
        assert_eq!(o["verdict"], "not_run", "{o}");
        let why = o["why"].as_str().unwrap();
        assert!(
            why.contains(accepted) && why.contains("nothing more"),
            "{why}"
        );
        assert_eq!(o["exchanges"], json!([]), "{o}");
    }
}
