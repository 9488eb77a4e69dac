//! The simulator under hostile clients: bodies built to be slow to refuse, and calls that
//! make state no load could read back.

use licensing_test_support::sim as support;

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::{Duration, Instant},
};

use serde_json::{Map, Value, json};

/// The unknown keys of the wide bodies: refusing one with a bad field (the search for the
/// field, at most a few hundred reads of the body) takes hundreds of times as long as a
/// write.
const WIDE: usize = 24_000;

/// A `createEnterprise` body of about 300 KB: [`WIDE`] keys the schema does not know, then
/// (serialized compactly, keys in order) `customerName` after all of them.
fn wide_body(customer_name: Value) -> Value {
    let mut body = Map::new();
    for i in 0..WIDE {
        body.insert(format!("a{i:05}"), json!(i));
    }
    body.insert("crmCustomerId".into(), json!("CRM-W"));
    body.insert("customerName".into(), customer_name);
    body.insert("branchName".into(), json!("North"));
    Value::Object(body)
}

/// The wide body with a `customerName` of the wrong type: the field to search for.
fn wide_bad_body() -> Value {
    wide_body(json!(12345))
}

/// Refusing a body built to be slow to refuse holds no other request up, and takes time
/// linear in the body. Each is measured against a yardstick of the same run, so that a
/// busy machine slows both sides alike: writes sent one after another all through the
/// wide body's refusal are never held up for more than a small share of it (a write
/// queued behind a search under the write lock waited for nearly all of it), and the
/// refusal, search for the field included, takes a few times as long as that of the same
/// keys with an empty `customerName`, read once and refused with no search (a search
/// reading the body once per key would take thousands of times as long).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wide_bad_body_holds_no_write_up() {
    let env = support::start().await;
    let path = support::path("createEnterprise", &[]);
    let text = serde_json::to_string(&wide_bad_body()).unwrap();
    assert!(
        text.find("\"a23999\"") < text.find("\"customerName\""),
        "the bad field comes after the unknown keys"
    );
    let refuse = |body: Value| {
        let (env, path) = (&env, &path);
        async move {
            let started = Instant::now();
            let raw = env.raw("POST", path, Some(body)).await;
            (raw, started.elapsed())
        }
    };
    let refused = AtomicBool::new(false);
    let ((raw, took), waits) = tokio::join!(
        async {
            let answer = refuse(wide_bad_body()).await;
            refused.store(true, Ordering::Release);
            answer
        },
        async {
            // From one write's answer to the next's, until one answers after the refusal:
            // a write held up by the refusal makes one of these as long as the hold.
            let mut waits = Vec::new();
            let mut last = Instant::now();
            while !refused.load(Ordering::Acquire) {
                env.allocate(1).await;
                waits.push(last.elapsed());
                last = Instant::now();
            }
            waits
        }
    );
    assert_eq!(raw.status, 299, "{:?}", raw.body);
    assert_eq!(raw.body["code"], "13004");
    let message = raw.body["message"].as_str().unwrap();
    assert!(
        message.contains("customerName"),
        "names the field: {message}"
    );
    let longest = waits.iter().max().copied().unwrap_or_default();
    eprintln!(
        "the wide body refused in {took:?}, {} writes answered meanwhile, the longest wait \
         {longest:?}",
        waits.len()
    );
    assert!(
        waits.len() > 1 && longest < took / 4,
        "a write waited {longest:?} of the refusal's {took:?} ({} writes)",
        waits.len()
    );
    // The fastest of three refusals of each, in turn: a moment of load slows one try,
    // not all three.
    let (mut searched, mut read) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        searched = searched.min(refuse(wide_bad_body()).await.1);
        let (raw, took) = refuse(wide_body(json!(""))).await;
        assert_eq!(raw.body["code"], "13004", "{:?}", raw.body);
        let message = raw.body["message"].as_str().unwrap();
        assert!(
            message.contains("customerName"),
            "refused as empty: {message}"
        );
        read = read.min(took);
    }
    let ratio = searched.as_secs_f64() / read.as_secs_f64();
    eprintln!("refused searching in {searched:?}, read once in {read:?}: {ratio:.1} times");
    assert!(
        ratio < 64.0,
        "the search took {ratio:.1} times a refusal of the body read once ({searched:?}, \
         {read:?}): it reads the body a few times, not once per key"
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
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
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

use licensing_test_support::pki;

/// A simulator over TLS with `pki`'s certificate, its other settings from `configure`.
async fn over_tls(
    pki: &pki::Pki,
    configure: impl FnOnce(licensing_sim::SimulatorBuilder) -> licensing_sim::SimulatorBuilder,
) -> licensing_sim::Simulator {
    let tls = licensing_sim::TlsConfig::from_pem(pki.cert.as_bytes(), pki.key.as_bytes());
    let builder = licensing_sim::Simulator::builder().tls(tls.unwrap());
    configure(builder).start().await.unwrap()
}

// The test's own second file, beside it (a test's root file finds its modules beside it,
// not in a folder of its name).
#[path = "hostile/replies.rs"]
mod replies;

/// A simulator over TLS that gives a reply up after `write_timeout`, and a
/// [`zero_window_client`] on it: the simulator and the client's two halves.
async fn zero_window_at(
    write_timeout: Duration,
) -> (
    licensing_sim::Simulator,
    h2::client::SendRequest<bytes::Bytes>,
    tokio::task::JoinHandle<Result<(), h2::Error>>,
) {
    let pki = pki::Pki::new();
    let sim = over_tls(&pki, |b| b.write_timeout(write_timeout)).await;
    let (send, connection) = zero_window_client(sim.addr(), &pki.ca).await;
    (sim, send, connection)
}

/// An HTTP/2 client over real TLS that advertises `SETTINGS_INITIAL_WINDOW_SIZE = 0` and
/// never grants more: no reply body can ever be sent to it. The connection's frames are
/// read by a task of its own (so resets and `GOAWAY` are seen); its end is the task's.
async fn zero_window_client(
    addr: std::net::SocketAddr,
    ca: &str,
) -> (
    h2::client::SendRequest<bytes::Bytes>,
    tokio::task::JoinHandle<Result<(), h2::Error>>,
) {
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
        .unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .expect("the TLS handshake");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (send, connection) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake(tls)
        .await
        .expect("the HTTP/2 handshake");
    (send, tokio::spawn(connection))
}

/// Sends one request without credentials (its error reply has a body) and waits for the
/// reply's head, which flow control does not hold back.
async fn stalled_request(
    send: &mut h2::client::SendRequest<bytes::Bytes>,
    addr: std::net::SocketAddr,
) -> h2::RecvStream {
    let uri = format!(
        "https://localhost:{}{}",
        addr.port(),
        support::path("allocateShellNums", &[])
    );
    let request = axum::http::Request::post(uri).body(()).unwrap();
    let mut ready = send.clone().ready().await.expect("room for a stream");
    let (response, _) = ready.send_request(request, true).unwrap();
    *send = ready;
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("the reply's head in time")
        .expect("a reply");
    response.into_body()
}

/// Over TLS HTTP/2, replies a client never lets through (a zero window) are given up at
/// the write timeout: each stream is reset, and the connection, past four, is closed.
/// Before, they kept their requests, and their connection, in progress for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_replies_a_client_never_reads_are_given_up_at_the_write_timeout() {
    let write_timeout = Duration::from_secs(2);
    let (sim, mut send, connection) = zero_window_at(write_timeout).await;
    let addr = sim.addr();
    // The 200 streams per connection, as many as the server lets one have.
    let mut bodies = Vec::new();
    for _ in 0..32 {
        bodies.push(stalled_request(&mut send, addr).await);
    }
    let started = Instant::now();
    assert_eq!(sim.stats().replies_abandoned, 0);
    for mut body in bodies {
        let ended = tokio::time::timeout(write_timeout * 3, body.data())
            .await
            .expect("the stream is ended within the write timeout");
        match ended {
            Some(Err(e)) => assert!(
                e.reason() == Some(h2::Reason::CANCEL) || e.is_go_away() || e.is_io(),
                "ended by {e:?}"
            ),
            other => panic!("a reply got through a zero window: {other:?}"),
        }
    }
    let ended = started.elapsed();
    // The first reply waited from before `started`; none ended much before the timeout.
    assert!(
        ended >= write_timeout - Duration::from_millis(500),
        "ended after {ended:?}"
    );
    let closed = tokio::time::timeout(Duration::from_secs(5), connection).await;
    assert!(closed.is_ok(), "the connection is still open");
    let stats = sim.stats();
    assert!(stats.replies_abandoned >= 4, "{stats:?}");
    assert!(stats.connections_timed_out >= 1, "{stats:?}");
    eprintln!("32 zero-window streams ended {ended:?} after the last reply head; {stats:?}");
    sim.shutdown().await.unwrap();
}

/// With every connection slot held by zero-window HTTP/2 clients (the 1,024
/// connections, scaled to a cap of 16), a well-behaved client is served: their replies
/// wait on the client, so their connections are closed to make room as quiet ones are.
/// Before, every new connection was refused until the replies were sent, that is never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_window_clients_filling_the_cap_are_evicted_for_a_well_behaved_one() {
    use licensing_sim::DEFAULT_APP_TOKEN;
    let pki = pki::Pki::new();
    let cap = 16;
    let sim = over_tls(&pki, |b| {
        b.max_connections(cap)
            // Long: eviction, not the write timeout, is what makes room here.
            .write_timeout(Duration::from_secs(120))
    })
    .await;
    let addr = sim.addr();
    let mut held = Vec::new();
    for _ in 0..cap {
        let (mut send, connection) = zero_window_client(addr, &pki.ca).await;
        let body = stalled_request(&mut send, addr).await;
        held.push((send, connection, body));
    }
    assert_eq!(sim.stats().connections, cap);
    // Replies waiting on their client for a second make their connection quiet.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pki.ca.as_bytes()).unwrap()])
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let url = format!(
        "{}{}?g_nonce={}",
        sim.url(),
        support::path("allocateShellNums", &[]),
        licensing_sdk::runtime::nonce()
    );
    let sent = Instant::now();
    let reply = client
        .post(url)
        .bearer_auth(DEFAULT_APP_TOKEN)
        .json(&json!({ "size": 1 }))
        .send()
        .await
        .expect("a well-behaved client is served");
    let took = sent.elapsed();
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.version(), reqwest::Version::HTTP_2);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["code"], json!(0), "{body}");
    let stats = sim.stats();
    assert!(stats.connections_evicted >= 1, "{stats:?}");
    assert_eq!(stats.connections_refused, 0, "{stats:?}");
    assert!(stats.connections <= cap, "{stats:?}");
    eprintln!("served in {took:?} with the cap of {cap} held by zero-window clients; {stats:?}");
    // The evicted client's connection is closed, its stalled reply with it.
    let mut closed = 0;
    for (_, connection, _) in held {
        if tokio::time::timeout(Duration::from_millis(100), connection)
            .await
            .is_ok()
        {
            closed += 1;
        }
    }
    assert!(closed >= 1, "no zero-window connection was closed");
    sim.shutdown().await.unwrap();
}
