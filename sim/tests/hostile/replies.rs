//! The reply budget: replies held for clients that do not take them stay within it, and
//! well-behaved clients still get theirs.

use std::time::{Duration, Instant};

use licensing_sim::Simulator;
use serde_json::{Value, json};

use super::{over_tls, pki, support, zero_window_at, zero_window_client};

/// The server's resident memory now, in bytes (it runs in this process).
fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS in /proc/self/status");
    let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

fn https_client(pki: &pki::Pki) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pki.ca.as_bytes()).unwrap()])
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// Fills the journal with `n` requests of about 60 KB each (kept whole, under the 64 KiB
/// a journal entry keeps); no credentials needed.
async fn fill_journal(client: &reqwest::Client, url: &str, n: usize) {
    let mut body = serde_json::Map::new();
    for i in 0..60 {
        body.insert(format!("k{i:02}"), json!("x".repeat(1000)));
    }
    let body = Value::Object(body);
    let path = support::path("createEnterprise", &[]);
    for _ in 0..n {
        let reply = client
            .post(format!("{url}{path}"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 299);
    }
}

/// Asks for the journal over a zero-window HTTP/2 stream: returns the reply's head.
async fn stalled_journal(
    send: &mut h2::client::SendRequest<bytes::Bytes>,
    addr: std::net::SocketAddr,
) -> axum::http::Response<h2::RecvStream> {
    let uri = format!("https://localhost:{}/__sandbox/v1/journal", addr.port());
    let request = axum::http::Request::get(uri).body(()).unwrap();
    let mut ready = send.clone().ready().await.expect("room for a stream");
    let (response, _) = ready.send_request(request, true).unwrap();
    *send = ready;
    tokio::time::timeout(Duration::from_secs(30), response)
        .await
        .expect("the reply's head in time")
        .expect("a reply")
}

/// Zero-window HTTP/2 clients asking for the journal hold no more than the reply budget:
/// past it they are answered `503` with `Retry-After` at once; a well-behaved client is
/// answered `503` while the budget is held by a connection still busy, and is sent the
/// whole journal once the stalled connections can be closed to make room. Before, each
/// stalled reply was held whole until the write timeout (12 × 37 MB = 449 MB).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_window_clients_hold_at_most_the_reply_budget() {
    let pki = pki::Pki::new();
    let sim = over_tls(&pki, |b| {
        b.reply_budget(20 << 20)
            // Long: closing connections for room, not the write timeout, frees the budget here.
            .write_timeout(Duration::from_secs(120))
    })
    .await;
    let addr = sim.addr();
    let client = https_client(&pki);
    let journal_url = format!("{}/__sandbox/v1/journal", sim.url());
    fill_journal(&client, &sim.url(), 200).await;
    let export = client.get(&journal_url).send().await.unwrap();
    assert_eq!(export.status(), 200);
    let size = export.bytes().await.unwrap().len();
    // One fits in the budget, two do not.
    assert!((21 << 19..20 << 20).contains(&size), "a {size} byte export");
    assert_eq!(sim.stats().reply_bytes, 0, "{:?}", sim.stats());

    let before = resident();
    // The first connection also has a request whose body never comes: it is busy, so it
    // is not closed to make room while that lasts.
    let (mut busy_send, busy_conn) = zero_window_client(addr, &pki.ca).await;
    let uri = format!(
        "https://localhost:{}{}",
        addr.port(),
        support::path("allocateShellNums", &[])
    );
    let (_, mut unfinished) = busy_send
        .send_request(axum::http::Request::post(uri).body(()).unwrap(), false)
        .unwrap();
    let first = stalled_journal(&mut busy_send, addr).await;
    assert_eq!(first.status(), 200);
    let mut held = vec![(busy_send, busy_conn, first)];
    let mut refused = 0;
    for _ in 0..11 {
        let (mut send, connection) = zero_window_client(addr, &pki.ca).await;
        let head = stalled_journal(&mut send, addr).await;
        match head.status().as_u16() {
            200 => {}
            503 => {
                refused += 1;
                assert_eq!(head.headers()["retry-after"], "1");
            }
            other => panic!("answered {other}"),
        }
        held.push((send, connection, head));
    }
    let stats = sim.stats();
    let grown = resident().saturating_sub(before);
    eprintln!(
        "12 zero-window journal streams ({size} bytes each): {refused} refused, \
         {grown} bytes more resident; {stats:?}"
    );
    // One admitted, the others refused.
    assert_eq!(refused, 11, "{stats:?}");
    assert!(stats.reply_bytes <= 20 << 20, "{stats:?}");
    assert!(
        stats.reply_bytes_peak <= (20 << 20) + (64 << 10),
        "{stats:?}"
    );
    assert_eq!(stats.replies_refused, 11, "{stats:?}");
    // Twelve replies held whole would be 12 × size.
    assert!(
        grown < 5 * size,
        "{grown} bytes more resident for 12 × {size}"
    );

    // The budget is held by a busy connection: a well-behaved client is told to come back.
    let answer = client.get(&journal_url).send().await.unwrap();
    assert_eq!(answer.status(), 503);
    assert_eq!(answer.headers()["retry-after"], "1");
    let message: Value = answer.json().await.unwrap();
    assert!(
        message["message"]
            .as_str()
            .unwrap()
            .contains("--reply-budget-mib"),
        "{message}"
    );
    // Once that connection has only its stalled reply (its unfinished request reset) for a
    // second, it is closed to make room and the well-behaved client is sent the journal.
    unfinished.send_reset(h2::Reason::CANCEL);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent = Instant::now();
    let answer = client.get(&journal_url).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    let whole = answer.bytes().await.unwrap();
    assert!(whole.len() >= size, "{} of {size} bytes", whole.len());
    let stats = sim.stats();
    eprintln!("then served in {:?}; {stats:?}", sent.elapsed());
    assert!(stats.connections_evicted >= 1, "{stats:?}");
    assert!(
        stats.reply_bytes_peak <= (20 << 20) + (64 << 10),
        "{stats:?}"
    );
    // A service call is answered throughout.
    let nonce = licensing_sdk::runtime::nonce();
    let reply = client
        .post(format!(
            "{}{}?g_nonce={nonce}",
            sim.url(),
            support::path("allocateShellNums", &[])
        ))
        .bearer_auth(licensing_sim::DEFAULT_APP_TOKEN)
        .json(&json!({ "size": 1 }))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.json::<Value>().await.unwrap()["code"], json!(0));
    drop(held);
    sim.shutdown().await.unwrap();
}

/// One reply larger than the whole budget is sent when nothing else is held: an export of
/// any size works on a server otherwise idle.
#[tokio::test]
async fn a_reply_larger_than_the_budget_is_sent_alone() {
    let env = support::start_with(Simulator::builder().reply_budget(64 << 10)).await;
    let client = reqwest::Client::new();
    let url = env.sim.url();
    fill_journal(&client, &url, 8).await;
    let export = client
        .get(format!("{url}/__sandbox/v1/journal"))
        .send()
        .await
        .unwrap();
    assert_eq!(export.status(), 200);
    let page: Value = export.json().await.unwrap();
    assert_eq!(page["entries"].as_array().unwrap().len(), 8);
    let stats = env.sim.stats();
    assert!(stats.reply_bytes_peak > 400 << 10, "{stats:?}");
    assert_eq!(stats.reply_bytes, 0, "{stats:?}");
    assert_eq!(stats.replies_refused, 0, "{stats:?}");
}

/// An HTTP/1.1 client that asks for a large reply and never reads it is disconnected at
/// the write timeout, and the reply's bytes go back to the budget. Before, the reply was
/// handed over whole and held until the idle timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http1_reply_never_read_is_given_up_at_the_write_timeout() {
    use tokio::io::AsyncWriteExt;
    let write_timeout = Duration::from_secs(2);
    let env = support::start_with(Simulator::builder().write_timeout(write_timeout)).await;
    let client = reqwest::Client::new();
    let url = env.sim.url();
    fill_journal(&client, &url, 150).await;
    let mut tcp = tokio::net::TcpStream::connect(env.sim.addr())
        .await
        .unwrap();
    let request = format!(
        "GET /__sandbox/v1/journal HTTP/1.1\r\nHost: {}\r\n\r\n",
        env.sim.addr()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    // More than the socket's buffers take: the rest waits on the client. Built as soon as
    // the machine gets to it (a busy one takes longer than the half second this waited).
    let building = Instant::now();
    while env.sim.stats().reply_bytes <= 1 << 20 && building.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stats = env.sim.stats();
    assert!(stats.reply_bytes > 1 << 20, "{stats:?}");
    let started = Instant::now();
    while env.sim.stats().reply_bytes > 0 && started.elapsed() < write_timeout * 4 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stats = env.sim.stats();
    eprintln!("given back after {:?}; {stats:?}", started.elapsed());
    assert_eq!(stats.reply_bytes, 0, "{stats:?}");
    assert!(stats.connections_timed_out >= 1, "{stats:?}");
    drop(tcp);
}

/// A connection whose only request was a reply given up at the write timeout is closed
/// then, not left open until the idle timeout (60 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_left_with_only_a_given_up_reply_is_closed() {
    let write_timeout = Duration::from_secs(2);
    let (sim, mut send, connection) = zero_window_at(write_timeout).await;
    let addr = sim.addr();
    let _body = super::stalled_request(&mut send, addr).await;
    let started = Instant::now();
    let closed = tokio::time::timeout(write_timeout * 3, connection).await;
    assert!(
        closed.is_ok(),
        "still open {:?} after the reply's head",
        started.elapsed()
    );
    let stats = sim.stats();
    assert_eq!(stats.replies_abandoned, 1, "{stats:?}");
    assert_eq!(stats.connections_timed_out, 1, "{stats:?}");
    eprintln!(
        "closed {:?} after the reply's head; {stats:?}",
        started.elapsed()
    );
    sim.shutdown().await.unwrap();
}
