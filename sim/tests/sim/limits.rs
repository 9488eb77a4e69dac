//! The server's limits under load: slow and idle clients (header, body and idle
//! timeouts), the connection cap, and the budget for request bodies held in memory. Each
//! test starts its own simulator with small limits, opens its connections on loopback
//! with raw sockets, and closes them all before it returns.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use licensing_sdk::{Backoff, ErrorCode, RetryPolicy, operations, order, order::types as ot};
use licensing_sim::{DEFAULT_APP_TOKEN, Simulator, TlsConfig};
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    task::JoinSet,
};

use crate::{pki::Pki, support::simulator};

/// A bound on anything that should be prompt, generous for a loaded 2-core machine.
const PROMPT: Duration = Duration::from_secs(2);

/// A connection to `addr` that has sent [`allocate_head`] for a body of `length` bytes.
async fn head_sent(addr: SocketAddr, length: usize) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(allocate_head(addr, length).as_bytes())
        .await
        .unwrap();
    s
}

/// The simulator `builder` starts, and its address.
async fn started(builder: licensing_sim::SimulatorBuilder) -> (Simulator, SocketAddr) {
    let sim = builder.start().await.unwrap();
    let addr = sim.addr();
    (sim, addr)
}

/// The head of an `allocateShellNums` request over HTTP/1.1 with a body of `length` bytes.
fn allocate_head(addr: SocketAddr, length: usize) -> String {
    let op = operations::find("allocateShellNums").expect("allocateShellNums in the table");
    format!(
        "{} {}?g_nonce={} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {DEFAULT_APP_TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n",
        op.method.as_str(),
        op.path_with(&[]),
        licensing_sdk::runtime::nonce(),
    )
}

/// `{"size":1}` padded with spaces (still valid JSON) to `length` bytes.
fn allocate_body(length: usize) -> Vec<u8> {
    let mut body = br#"{"size":1}"#.to_vec();
    body.resize(length.max(body.len()), b' ');
    body
}

/// An order-service client that never retries, so a test sees each reply.
fn client(sim: &Simulator) -> order::Client {
    order::Client::builder(&sim.url())
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap()
}

/// Allocates one asset number; returns how long it took.
async fn allocate(client: &order::Client) -> Duration {
    let started = Instant::now();
    let numbers = tokio::time::timeout(
        Duration::from_secs(10),
        client
            .allocate_shell_nums()
            .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN)),
    )
    .await
    .expect("the simulator answers within 10 s")
    .expect("allocateShellNums succeeds");
    assert_eq!(numbers.len(), 1);
    started.elapsed()
}

/// Reads until the server closes the connection (end of stream or an error such as a
/// reset), for at most `within`; returns what it sent, or `None` if it kept the
/// connection open.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(within, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    });
    read.await.ok().map(|()| received)
}

/// One HTTP/1.1 reply read off a raw connection: its status and JSON body; `None` if the
/// connection closed first.
async fn read_reply(stream: &mut TcpStream) -> Option<(u16, Value)> {
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    };
    let head = String::from_utf8_lossy(&received[..head_end]).to_ascii_lowercase();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while received.len() < head_end + length {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    }
    let body = &received[head_end..head_end + length];
    Some((status, serde_json::from_slice(body).unwrap_or(Value::Null)))
}

/// Parses a whole reply already received (see [`read_reply`]).
fn parse_reply(received: &[u8]) -> Option<(u16, Value)> {
    let text = String::from_utf8_lossy(received);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, serde_json::from_str(body).unwrap_or(Value::Null)))
}

/// How many sockets of each of three kinds a test may open: both ends of every
/// connection live in this process, so its open-file limit bounds them.
fn sockets_per_kind(wanted: usize) -> usize {
    let limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            limits
                .lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3)?.parse::<usize>().ok())
        })
        .unwrap_or(256);
    // Two descriptors per connection, three kinds, and room for the test's own.
    wanted.min(limit.saturating_sub(200) / 6).max(10)
}

/// Polls `condition` every 20 ms for up to `within`; whether it held.
async fn eventually(within: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < within {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    condition()
}

#[tokio::test]
async fn slow_and_idle_clients_are_closed_and_never_block_a_normal_request() {
    let header_timeout = Duration::from_secs(2);
    let body_timeout = Duration::from_secs(3);
    let idle_timeout = Duration::from_secs(4);
    let (sim, addr) = started(
        Simulator::builder()
            .header_timeout(header_timeout)
            .body_timeout(body_timeout)
            .idle_timeout(idle_timeout),
    )
    .await;
    let n = sockets_per_kind(300);

    // Idle: connected, nothing sent.
    let mut idle = Vec::new();
    for _ in 0..n {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    // Half-sent heads: a request line and one header, never the blank line.
    let mut heads = Vec::new();
    for _ in 0..n / 2 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST /order/api/order/v1/x HTTP/1.1\r\nHost: sim\r\n")
            .await
            .unwrap();
        heads.push(s);
    }
    // Half-sent bodies: a complete head announcing 100 bytes, 10 of them sent.
    let mut bodies = Vec::new();
    for _ in 0..n - n / 2 {
        let mut s = head_sent(addr, 100).await;
        s.write_all(&allocate_body(100)[..10]).await.unwrap();
        bodies.push(s);
    }
    // A connection that was served and is now idle between requests (keep-alive).
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(b"GET /nowhere HTTP/1.1\r\nHost: sim\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_reply(&mut kept).await.map(|(s, _)| s), Some(404));
    let kept_since = Instant::now();

    let all = 2 * n + 1;
    assert!(
        eventually(PROMPT, || sim.stats().connections >= all).await,
        "{all} connections held: {:?}",
        sim.stats()
    );

    // While they are all held, a normal request is answered promptly.
    let client = client(&sim);
    let took = allocate(&client).await;
    eprintln!(
        "{n} idle, {} half-sent heads, {} half-sent bodies: a normal request took {took:?}",
        n / 2,
        n - n / 2
    );
    assert!(took < PROMPT, "a normal request took {took:?}");

    // The idle and half-sent-head connections are closed by the header timeout.
    let mut closing = JoinSet::new();
    for mut s in idle.into_iter().chain(heads) {
        closing.spawn(async move {
            read_until_closed(&mut s, header_timeout + Duration::from_secs(5))
                .await
                .is_some()
        });
    }
    // The half-sent bodies get code 500 ("retry") when the body timeout expires, then
    // their connections close.
    for mut s in bodies {
        closing.spawn(async move {
            let received = read_until_closed(&mut s, body_timeout + Duration::from_secs(5)).await;
            let Some(received) = received else {
                return false;
            };
            let (status, body) = parse_reply(&received).expect("a reply before the close");
            assert_eq!(status, 299, "{body}");
            assert_eq!(body["code"], "500", "{body}");
            true
        });
    }
    // Served once, then quiet: still open after the header timeout (it is idle, not
    // slow), closed by the idle timeout.
    tokio::time::sleep_until((kept_since + header_timeout + Duration::from_millis(500)).into())
        .await;
    let mut probe = [0u8; 1];
    assert!(
        tokio::time::timeout(Duration::from_millis(100), kept.read(&mut probe))
            .await
            .is_err(),
        "a keep-alive connection was closed before its idle timeout"
    );
    let kept_closed = read_until_closed(&mut kept, idle_timeout + Duration::from_secs(5))
        .await
        .is_some();
    let kept_open_for = kept_since.elapsed();

    let mut closed = 0;
    while let Some(done) = closing.join_next().await {
        closed += usize::from(done.unwrap());
    }
    let stats = sim.stats();
    eprintln!("closed by the server: {closed} of {}; {stats:?}", 2 * n);
    assert_eq!(closed, 2 * n, "every slow or idle connection is closed");
    assert!(kept_closed, "the idle keep-alive connection is closed");
    // Its idle time started as its reply was sent, just before `kept_since`.
    assert!(
        kept_open_for >= idle_timeout - Duration::from_millis(500),
        "closed after {kept_open_for:?}"
    );
    assert!(
        stats.connections_timed_out >= (n + n / 2 + 1) as u64,
        "{stats:?}"
    );
    assert_eq!(stats.bodies_refused, (n - n / 2) as u64, "{stats:?}");
    assert_eq!(stats.connections_refused, 0, "{stats:?}");

    // And the server still answers.
    assert!(allocate(&client).await < PROMPT);
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_connection_cap_refuses_fast_and_replaces_quiet_connections() {
    const CAP: usize = 16;
    let sim = Simulator::builder()
        .max_connections(CAP)
        // Long timeouts: here only the cap closes connections.
        .header_timeout(Duration::from_secs(60))
        .body_timeout(Duration::from_secs(60))
        .start()
        .await
        .unwrap();
    let addr = sim.addr();
    assert_eq!(sim.stats().max_connections, CAP);

    // Every slot holds a request in progress (its body half-sent).
    let mut busy = Vec::new();
    for _ in 0..CAP {
        let mut s = head_sent(addr, 100).await;
        s.write_all(b"{").await.unwrap();
        busy.push(s);
    }
    // Each request has reached the server once its declared body is reserved.
    assert!(
        eventually(PROMPT, || {
            let stats = sim.stats();
            stats.connections == CAP && stats.body_bytes == CAP * 100
        })
        .await,
        "{:?}",
        sim.stats()
    );

    // More connections are closed at once, without a reply.
    for _ in 0..4 {
        let started = Instant::now();
        let mut extra = TcpStream::connect(addr).await.unwrap();
        let received = read_until_closed(&mut extra, PROMPT).await;
        assert_eq!(received.as_deref(), Some(&[][..]), "closed without a reply");
        assert!(started.elapsed() < PROMPT);
    }
    let stats = sim.stats();
    assert_eq!(stats.connections_refused, 4, "{stats:?}");
    assert_eq!(stats.connections, CAP, "{stats:?}");

    // The requests in progress were not cut short: each completes when its body does.
    for s in &mut busy {
        s.write_all(&allocate_body(100)[1..]).await.unwrap();
        let (status, body) = read_reply(s).await.expect("a reply");
        assert_eq!((status, &body["code"]), (200, &Value::from(0)), "{body}");
    }

    // Now every slot is quiet (idle keep-alive); a new client takes the place of the one
    // idle the longest, and is answered promptly.
    let client = client(&sim);
    let took = allocate(&client).await;
    assert!(took < PROMPT, "took {took:?}");
    let first = &mut busy[0];
    assert!(
        read_until_closed(first, PROMPT).await.is_some(),
        "the connection idle the longest made room"
    );
    let stats = sim.stats();
    eprintln!("cap {CAP}: {stats:?}");
    assert_eq!(stats.connections_evicted, 1, "{stats:?}");
    assert!(stats.connections <= CAP, "{stats:?}");

    // Released, everything works as before.
    drop(busy);
    assert!(eventually(PROMPT, || sim.stats().connections <= 1).await);
    assert!(allocate(&client).await < PROMPT);
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn concurrent_large_bodies_stay_within_the_budget() {
    const MIB: usize = 1024 * 1024;
    const BUDGET: usize = 8 * MIB;
    const BODY: usize = 3 * MIB;
    const CLIENTS: usize = 6;
    let (sim, addr) = started(Simulator::builder().body_budget(BUDGET)).await;

    // Six heads announcing 3 MiB each, with part of their bodies: room for two at once.
    let body = allocate_body(BODY);
    let mut streams = Vec::new();
    for _ in 0..CLIENTS {
        let mut s = head_sent(addr, BODY).await;
        s.write_all(&body[..1024]).await.unwrap();
        streams.push(s);
    }
    let admitted = BODY * (BUDGET / BODY);
    assert!(
        eventually(PROMPT, || {
            let stats = sim.stats();
            stats.bodies_refused == (CLIENTS - BUDGET / BODY) as u64 && stats.body_bytes == admitted
        })
        .await,
        "{:?}",
        sim.stats()
    );

    // The rest of every body; the refused may already be closed.
    let mut replies = JoinSet::new();
    for mut s in streams {
        let body = body.clone();
        replies.spawn(async move {
            let _ = s.write_all(&body[1024..]).await;
            read_reply(&mut s).await
        });
    }
    let (mut succeeded, mut refused) = (0, 0);
    while let Some(reply) = replies.join_next().await {
        match reply.unwrap() {
            Some((200, body)) => {
                assert_eq!(body["code"], 0, "{body}");
                succeeded += 1;
            }
            Some((299, body)) => {
                assert_eq!(body["code"], "500", "{body}");
                refused += 1;
            }
            // The connection closed before the reply was read: a refusal too.
            None => refused += 1,
            Some(other) => panic!("unexpected reply {other:?}"),
        }
    }
    let stats = sim.stats();
    eprintln!(
        "{CLIENTS} bodies of {BODY} bytes, budget {BUDGET}: {succeeded} answered, {refused} refused; {stats:?}"
    );
    assert_eq!((succeeded, refused), (2, 4));
    assert_eq!(stats.body_bytes_peak, admitted, "{stats:?}");
    assert!(eventually(PROMPT, || sim.stats().body_bytes == 0).await);

    // Concurrent clients sending as fast as they can: however the bodies interleave,
    // the budget holds and every reply is a success or a retryable 500.
    let http = reqwest::Client::new();
    let op = operations::find("allocateShellNums").unwrap();
    let mut sends = JoinSet::new();
    for _ in 0..3 * CLIENTS {
        let http = http.clone();
        let url = format!(
            "{}{}?g_nonce={}",
            sim.url(),
            op.path_with(&[]),
            licensing_sdk::runtime::nonce()
        );
        let body = body.clone();
        sends.spawn(async move {
            let response = http
                .post(url)
                .bearer_auth(DEFAULT_APP_TOKEN)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await;
            match response {
                Ok(r) => {
                    let status = r.status().as_u16();
                    let body: Value = r.json().await.unwrap_or(Value::Null);
                    Some((status, body["code"].clone()))
                }
                Err(_) => None,
            }
        });
    }
    let mut outcomes = Vec::new();
    while let Some(outcome) = sends.join_next().await {
        let outcome = outcome.unwrap();
        if let Some((status, code)) = &outcome {
            assert!(
                (*status, code) == (200, &Value::from(0))
                    || (*status, code) == (299, &Value::from("500")),
                "{outcome:?}"
            );
        }
        outcomes.push(outcome);
    }
    let stats = sim.stats();
    eprintln!("{} concurrent bodies: {outcomes:?}; {stats:?}", 3 * CLIENTS);
    assert!(stats.body_bytes_peak <= BUDGET, "{stats:?}");
    assert!(outcomes.iter().any(|o| matches!(o, Some((200, _)))));

    // The process stays responsive, and the budget is all given back.
    assert!(allocate(&client(&sim)).await < PROMPT);
    assert!(eventually(PROMPT, || sim.stats().body_bytes == 0).await);
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_body_refused_for_the_budget_is_retried_by_the_sdk() {
    let budget = 64 * 1024;
    let (sim, addr) = started(Simulator::builder().body_budget(budget)).await;

    // A client holds the whole budget: its head announces it, its body never comes.
    let holder = head_sent(addr, budget).await;
    assert!(eventually(PROMPT, || sim.stats().body_bytes == budget).await);

    // Without retries, a request with any body is refused with code 500.
    let error = client(&sim)
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&ErrorCode::NetworkException), "{error}");

    // Retrying, the request succeeds once the budget is free again.
    let retrying = order::Client::builder(&sim.url())
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::Backoff(Backoff {
            max_attempts: 50,
            initial_delay: Duration::from_millis(20),
            max_delay: Duration::from_millis(100),
            max_elapsed: Duration::from_secs(10),
        }))
        .build()
        .unwrap();
    let call = tokio::spawn(async move {
        retrying
            .allocate_shell_nums()
            .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
            .await
    });
    // Refused at least once more (this client), then the budget is given back.
    assert!(eventually(PROMPT, || sim.stats().bodies_refused >= 2).await);
    drop(holder);
    let numbers = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the retries end")
        .unwrap()
        .expect("a retry succeeds");
    assert_eq!(numbers.len(), 1);
    let stats = sim.stats();
    assert!(stats.bodies_refused >= 2, "{stats:?}");
    assert_eq!(stats.body_bytes_peak, budget, "{stats:?}");
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn silent_tls_clients_are_closed_by_the_header_timeout() {
    let pki = Pki::new();
    let tls = TlsConfig::from_pem(pki.cert.as_bytes(), pki.key.as_bytes()).unwrap();
    let header_timeout = Duration::from_secs(1);
    let sim = simulator(Simulator::builder().tls(tls).header_timeout(header_timeout)).await;
    let mut silent = Vec::new();
    for _ in 0..50 {
        silent.push(TcpStream::connect(sim.addr()).await.unwrap());
    }
    let started = Instant::now();
    for s in &mut silent {
        assert!(
            read_until_closed(s, header_timeout + Duration::from_secs(5))
                .await
                .is_some()
        );
    }
    assert!(started.elapsed() < header_timeout + Duration::from_secs(5));
    assert_eq!(sim.stats().connections_timed_out, 50, "{:?}", sim.stats());
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_body_larger_than_one_request_may_send_is_a_malformed_request() {
    let budget = 1024 * 1024;
    let (sim, addr) = started(Simulator::builder().body_budget(budget)).await;
    let mut s = head_sent(addr, budget + 1).await;
    // Answered from the head alone: retrying could not help, so it is not a 500.
    let (status, body) = read_reply(&mut s).await.expect("a reply");
    assert_eq!(
        (status, &body["code"]),
        (299, &Value::from("13004")),
        "{body}"
    );
    assert!(
        body["cause"]
            .as_str()
            .unwrap()
            .contains("larger than 1 MiB"),
        "{body}"
    );
    let stats = sim.stats();
    assert_eq!(
        (stats.body_bytes_peak, stats.bodies_refused),
        (0, 0),
        "{stats:?}"
    );
    sim.shutdown().await.unwrap();
}

/// A `dropConnection` fault closes the connection with not a byte of a reply: the gate
/// signals the server's connection task, which closes it (no task unwinds, which under
/// `panic = "abort"` would end the process). The server goes on: a keep-alive connection
/// opened before is still served, and so is a new one.
#[tokio::test]
async fn a_drop_connection_fault_closes_with_no_answer_and_the_server_goes_on() {
    use licensing_sim::admin::types::{Fault, FaultKind, FaultRuleSpec};
    let sim = Simulator::builder().start().await.unwrap();
    let addr = sim.addr();
    let admin = sim.admin();
    let body = allocate_body(0);
    let request = || [allocate_head(addr, body.len()).into_bytes(), body.clone()].concat();

    let mut before = TcpStream::connect(addr).await.unwrap();
    before.write_all(&request()).await.unwrap();
    assert_eq!(read_reply(&mut before).await.map(|(s, _)| s), Some(200));

    admin
        .create_fault()
        .body(
            FaultRuleSpec::builder()
                .operation("allocateShellNums")
                .fault(Fault::builder().kind(FaultKind::DropConnection)),
        )
        .send()
        .await
        .unwrap();
    let mut dropped = TcpStream::connect(addr).await.unwrap();
    dropped.write_all(&request()).await.unwrap();
    let received = read_until_closed(&mut dropped, Duration::from_secs(10))
        .await
        .expect("the connection is closed");
    assert!(
        received.is_empty(),
        "no byte of a reply: {:?}",
        String::from_utf8_lossy(&received)
    );
    let journal = crate::support::journal(&admin).await;
    assert!(
        journal
            .entries
            .iter()
            .any(|e| e.status == 0 && e.fault.is_some()),
        "the dropped exchange is journalled without a reply"
    );

    admin.clear_faults().send().await.unwrap();
    before.write_all(&request()).await.unwrap();
    assert_eq!(read_reply(&mut before).await.map(|(s, _)| s), Some(200));
    allocate(&client(&sim)).await;
}
