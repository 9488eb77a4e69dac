//! The simulator under hostile clients: bodies built to be slow to refuse, and calls that
//! make state no load could read back.

#[allow(dead_code)]
#[path = "sim/support.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// A `createEnterprise` body of about 300 KB: 24,000 keys the schema does not know and one
/// field of the wrong type.
fn wide_bad_body() -> Value {
    let mut body = Map::new();
    for i in 0..24_000 {
        body.insert(format!("k{i:05}"), json!(i));
    }
    body.insert("crmCustomerId".into(), json!("CRM-W"));
    body.insert("customerName".into(), json!(12345));
    body.insert("branchName".into(), json!("North"));
    Value::Object(body)
}

/// Refusing a body built to be slow to refuse holds no other request up: the refusal
/// comes in time linear in the body, and a write from another client is answered
/// meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wide_bad_body_holds_no_write_up() {
    let env = support::start().await;
    let body = wide_bad_body();
    let path = support::path("createEnterprise", &[]);
    let started = Instant::now();
    let (bad, write) = tokio::join!(
        async {
            let raw = env.raw("POST", &path, Some(body)).await;
            (raw, started.elapsed())
        },
        async {
            // Sent while the wide body is being read and refused.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let sent = Instant::now();
            env.allocate(1).await;
            sent.elapsed()
        }
    );
    let (raw, bad_took) = bad;
    assert_eq!(raw.status, 299, "{:?}", raw.body);
    assert_eq!(raw.body["code"], "13004");
    let message = raw.body["message"].as_str().unwrap();
    assert!(
        message.contains("customerName"),
        "names the field: {message}"
    );
    eprintln!("the wide body refused in {bad_took:?}; a concurrent write answered in {write:?}");
    assert!(bad_took < Duration::from_secs(1), "refused in {bad_took:?}");
    assert!(
        write < Duration::from_millis(100),
        "a concurrent write waited {write:?}"
    );
}

/// A small, seeded generator: the same walk for the same seed, so a failure names its seed.
struct Walk(u64);

impl Walk {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// Names that spell each other's derived codes (`Zed` → `zed`, then `zede11` …).
const NAMES: [&str; 8] = [
    "Zed",
    "zede11",
    "ZED",
    "zed",
    "zede11e16",
    "Acme",
    "acme",
    "A",
];
const USERS: [&str; 4] = ["alice", "Alice", "bob", "zede11"];

/// Random sequences of calls of both services, names chosen to collide: after every
/// call the state exports, imports into a fresh simulator as the same document, and a
/// restart from the state file gives the same export.
#[tokio::test]
async fn every_state_the_api_can_reach_reloads() {
    use licensing_sdk::{member::types as mt, order::types as ot};
    use licensing_sim::Simulator;

    for seed in [1_u64, 7, 42] {
        let dir =
            std::env::temp_dir().join(format!("licensing-walk-{seed}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        let mut env = support::start_with(Simulator::builder().state_file(&path)).await;
        let fresh = Simulator::start().await.unwrap();
        let mut walk = Walk(seed);
        let mut enterprises: Vec<String> = Vec::new();
        let mut members: Vec<(String, String)> = Vec::new();
        for step in 0..60 {
            let what = walk.next() % 6;
            match what {
                0 | 1 => {
                    let name = walk.pick(&NAMES).to_string();
                    let created = env
                        .order
                        .create_enterprise()
                        .body(
                            ot::CreateEnterpriseRequest::builder()
                                .crm_customer_id(format!("CRM-{step}"))
                                .customer_name(name)
                                .branch_name("North"),
                        )
                        .await;
                    if let Ok(created) = created {
                        enterprises.push(created.enterprise_global_id);
                    }
                }
                2 if !enterprises.is_empty() => {
                    let ent = walk.pick(&enterprises).clone();
                    let user = walk.pick(&USERS).to_string();
                    let added =
                        env.member
                            .add_members()
                            .enterprise_global_id(&ent)
                            .body(
                                mt::AddMembersRequest::builder().user_list(vec![
                                    support::new_member(&user, "Secret-123", &user),
                                ]),
                            )
                            .await;
                    if let Ok(added) = added {
                        for m in added.succeeded {
                            members.push((ent.clone(), m.global_id));
                        }
                    }
                }
                3 if !members.is_empty() => {
                    let (ent, member) =
                        members.remove((walk.next() % members.len() as u64) as usize);
                    let _ = env
                        .member
                        .delete_member()
                        .enterprise_global_id(&ent)
                        .member_global_id(&member)
                        .await;
                }
                4 => {
                    env.allocate(1 + (walk.next() % 3) as u32).await;
                }
                5 if !enterprises.is_empty() => {
                    let ent = enterprises.remove((walk.next() % enterprises.len() as u64) as usize);
                    env.sim.reset_enterprise(&ent).unwrap();
                    members.retain(|(e, _)| *e != ent);
                }
                _ => {}
            }
            let exported = env.sim.export_state();
            if let Err(e) = fresh.import_state(exported.clone()) {
                panic!("seed {seed}, step {step}: the export does not import: {e}");
            }
            assert_eq!(fresh.export_state(), exported, "seed {seed}, step {step}");
            if step % 15 == 14 {
                let support::Env {
                    sim, order, member, ..
                } = env;
                drop((order, member));
                sim.shutdown().await.unwrap();
                env = support::start_with(Simulator::builder().state_file(&path)).await;
                assert_eq!(
                    env.sim.export_state(),
                    exported,
                    "seed {seed}, step {step}: a restart from the file"
                );
            }
        }
        let codes: Vec<String> = env.sim.export_state()["state"]["enterprises"]
            .as_object()
            .unwrap()
            .values()
            .map(|e| e["code"].as_str().unwrap().to_string())
            .collect();
        let unique: std::collections::BTreeSet<_> = codes.iter().collect();
        assert_eq!(unique.len(), codes.len(), "seed {seed}: codes {codes:?}");
    }
}

/// A field of any size is refused before it is kept, and an error reply quotes only an
/// excerpt of what was sent.
#[tokio::test]
async fn long_fields_are_refused_and_never_echoed_whole() {
    let env = support::start().await;
    let huge = "n".repeat(50 * 1024 * 1024);
    let path = support::path("createEnterprise", &[]);
    let body = json!({"crmCustomerId": "CRM-L", "customerName": huge, "branchName": "North"});
    let raw = env.raw("POST", &path, Some(body)).await;
    assert_eq!(raw.status, 299);
    assert_eq!(raw.body["code"], "13004");
    let reply = raw.body.to_string();
    assert!(reply.len() < 4096, "a {} byte reply", reply.len());
    assert!(reply.contains("--max-string-bytes"), "{reply}");
    assert_eq!(env.sim.export_state()["state"]["enterprises"], json!({}));

    // A value of the wrong type is quoted by serde: only an excerpt comes back.
    let path = support::path("allocateShellNums", &[]);
    let wrong = "9".repeat(10_000);
    let raw = env.raw("POST", &path, Some(json!({ "size": wrong }))).await;
    assert_eq!(raw.status, 299);
    let reply = raw.body.to_string();
    assert!(
        reply.len() < 4096,
        "a {} byte reply: {reply:.200}",
        reply.len()
    );
}

/// The plain listener speaks HTTP/1.1 only: an HTTP/2 client with prior knowledge is not
/// served (its bounds are the TLS listener's, where ALPN chooses it), and HTTP/1.1 goes on.
#[tokio::test]
async fn plain_connections_do_not_speak_http2() {
    let env = support::start().await;
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let refused = h2
        .get(format!("{}/__sandbox/v1/clock", env.sim.url()))
        .timeout(Duration::from_secs(5))
        .send()
        .await;
    assert!(refused.is_err(), "served over HTTP/2: {refused:?}");
    let http1 = reqwest::get(format!("{}/__sandbox/v1/clock", env.sim.url()))
        .await
        .unwrap();
    assert_eq!(http1.status(), 200);
}

/// No client grows the state without bound: past the configured counts a call is refused
/// whole, naming the bound, and nothing of it is kept.
#[tokio::test]
async fn the_state_holds_at_most_its_configured_records() {
    use licensing_sim::Simulator;
    // createEnterprise makes two employees; each enterprise here takes two.
    let env = support::start_with(Simulator::builder().max_records(2, 5, 1)).await;
    let first = env.enterprise("One").await;
    let second = env
        .order
        .create_enterprise()
        .body(
            licensing_sdk::order::types::CreateEnterpriseRequest::builder()
                .crm_customer_id("CRM-2")
                .customer_name("Two")
                .branch_name("North"),
        )
        .await;
    assert!(second.is_ok(), "{second:?}");
    let path = support::path("createEnterprise", &[]);
    let third = env
        .raw(
            "POST",
            &path,
            Some(json!({"crmCustomerId": "CRM-3", "customerName": "Three", "branchName": "N"})),
        )
        .await;
    assert_eq!(third.body["code"], "13004", "{:?}", third.body);
    assert!(third.body.to_string().contains("--max-enterprises"));
    assert_eq!(
        env.sim.export_state()["state"]["enterprises"]
            .as_object()
            .unwrap()
            .len(),
        2
    );
    // Four employees so far (two per enterprise): one more fits, two do not.
    let members = support::path("addMembers", &[&first.global_id]);
    let two = json!({"userList": [
        {"userName": "ann", "password": "Secret-123", "name": "Ann"},
        {"userName": "ben", "password": "Secret-123", "name": "Ben"}]});
    let refused = env.raw("POST", &members, Some(two)).await;
    assert_eq!(refused.body["code"], "40000", "{:?}", refused.body);
    assert!(refused.body.to_string().contains("--max-employees"));
    env.add_member(&first, "cid").await;
    // One license order fits.
    let nums = env.allocate(2).await;
    env.buy(&first, "normal_recover_usbkey", &nums[..1], "urn:p:cad", 1)
        .await;
    let order = support::new_buy(
        &first,
        "normal_recover_usbkey",
        json!([{ "assetNos": [nums[1]], "products": [support::product("urn:p:cad", 1)] }]),
    );
    let batch = support::path("batchOrder", &[]);
    let refused = env
        .raw(
            "POST",
            &format!("{batch}?appKey=k"),
            Some(serde_json::to_value(support::batch(vec![order])).unwrap()),
        )
        .await;
    assert_eq!(refused.body["code"], "13004", "{:?}", refused.body);
    assert!(refused.body.to_string().contains("--max-orders"));
}
