//! Memory stays bounded against replies without end. The probe's peak resident memory
//! (`VmHWM`) in a run against an upstream whose every reply is endless (a `Content-Length`
//! of 200 MB that is then sent for as long as the probe reads, a chunked body that never
//! ends, a header that never ends) is measured against the same run against an upstream
//! whose every reply is small: a ratio of two runs on the same machine, not a number of
//! bytes that depends on the build.

use std::{
    io::Write as _,
    net::TcpStream,
    process::{Child, Stdio},
    sync::{
        Arc,
        atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use licensing_test_support::raw::RawServer;

use super::{Sim, report};

const MIB: u64 = 1024 * 1024;
/// What the endless `Content-Length` reply announces.
const HUGE: u64 = 200 * 1000 * 1000;

/// The peak resident memory of process `pid` so far, in bytes; `None` once it is gone.
fn peak(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())?;
    Some(kib * 1024)
}

/// The process under measure and the highest peak seen of it: the server samples it as
/// each request arrives (so the peak a reply caused is seen at the next request, while
/// the process lives), the test while it waits.
#[derive(Default)]
struct Measure {
    pid: AtomicU32,
    peak: AtomicU64,
    /// Bytes of reply bodies the server got out to the probe.
    offered: AtomicU64,
    requests: AtomicUsize,
}

impl Measure {
    fn sample(&self) {
        let pid = self.pid.load(Ordering::SeqCst);
        if let Some(now) = (pid != 0).then(|| peak(pid)).flatten() {
            self.peak.fetch_max(now, Ordering::SeqCst);
        }
    }
}

/// Writes `chunk` until the probe stops reading; how many bytes went out.
fn flood(stream: &mut TcpStream, chunk: &[u8]) -> u64 {
    let mut sent = 0;
    while stream.write_all(chunk).is_ok() {
        sent += chunk.len() as u64;
    }
    sent
}

/// Answers the `n`th request with a reply without end, one of three kinds in turn.
fn endless(stream: &mut TcpStream, n: usize) -> u64 {
    let spaces = vec![b' '; 64 * 1024];
    match n % 3 {
        0 => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {HUGE}\r\n\r\n["
            );
            let _ = stream.write_all(head.as_bytes());
            flood(stream, &spaces)
        }
        1 => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
            );
            let mut chunk = format!("{:x}\r\n", spaces.len()).into_bytes();
            chunk.extend_from_slice(&spaces);
            chunk.extend_from_slice(b"\r\n");
            flood(stream, &chunk)
        }
        _ => {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nx-endless: ");
            flood(stream, &vec![b'a'; 64 * 1024])
        }
    }
}

/// A small documented success, with every field a reply of the probe's reads may hold.
fn small(stream: &mut TcpStream) -> u64 {
    let body = r#"{"code":0,"message":"success","data":[]}"#;
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    body.len() as u64
}

/// The default tier against an upstream answering each request with `answer`, with
/// `args`: the measure, and the run's report.
fn measured(
    answer: fn(&mut TcpStream, usize) -> u64,
    args: &[&str],
) -> (Arc<Measure>, serde_json::Value) {
    let measure = Arc::new(Measure::default());
    let seen = measure.clone();
    let server = RawServer::start(move |mut stream, _| {
        seen.sample();
        let n = seen.requests.fetch_add(1, Ordering::SeqCst);
        let sent = answer(&mut stream, n);
        seen.offered.fetch_add(sent, Ordering::SeqCst);
    });
    let sim = Sim::start();
    let mut child: Child = sim
        .probe()
        .args(sim.ids())
        .args(["-o", "json"])
        .args(args)
        .env("LICENSING_ORDER_URL", &server.url)
        .env("LICENSING_MEMBER_URL", &server.url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    measure.pid.store(child.id(), Ordering::SeqCst);
    while child.try_wait().unwrap().is_none() {
        measure.sample();
        std::thread::sleep(Duration::from_millis(1));
    }
    let output = child.wait_with_output().unwrap();
    let (report, _) = report(&output);
    (measure, report)
}

#[test]
fn replies_without_end_leave_the_peak_memory_near_that_of_small_replies() {
    let (yardstick, calm) = measured(|stream, _| small(stream), &[]);
    let (hostile, flooded) = measured(endless, &[]);
    // The same flood read within a bound 16 times as high: what shows that the measure
    // sees a reply held, so that the bound is what keeps the peak down.
    let (loose, _) = measured(endless, &["--max-reply-bytes", "16777216"]);
    let calm_peak = yardstick.peak.load(Ordering::SeqCst);
    let flooded_peak = hostile.peak.load(Ordering::SeqCst);
    let loose_peak = loose.peak.load(Ordering::SeqCst);
    let requests = hostile.requests.load(Ordering::SeqCst);
    let summary = format!(
        "peak {} KiB against small replies ({} requests), {} KiB against endless ones \
         ({requests} requests, {} MiB of them sent to it), {} KiB against endless ones read \
         within 16 MiB",
        calm_peak / 1024,
        yardstick.requests.load(Ordering::SeqCst),
        flooded_peak / 1024,
        hostile.offered.load(Ordering::SeqCst) / MIB,
        loose_peak / 1024,
    );
    eprintln!("{summary}");
    assert!(calm_peak > 0 && flooded_peak > 0, "{summary}");
    // Every kind of endless reply was met more than once, and each was cut or given up.
    assert!(requests >= 9, "{summary}");
    let outcomes = flooded["outcomes"].as_array().unwrap();
    let exchanges: Vec<&serde_json::Value> = outcomes
        .iter()
        .flat_map(|o| o["exchanges"].as_array().into_iter().flatten())
        .collect();
    let cut = exchanges
        .iter()
        .filter(|x| x["status"] == 0 || x["note"].as_str().is_some_and(|n| n.contains("cut")))
        .count();
    assert!(
        !exchanges.is_empty() && cut == exchanges.len(),
        "{cut} of {} cut: {flooded:#}",
        exchanges.len()
    );
    assert!(
        outcomes.iter().all(|o| o["verdict"] != "as_documented"),
        "{flooded:#}"
    );
    assert!(!calm["outcomes"].as_array().unwrap().is_empty());
    // Each reply read within --max-reply-bytes (1 MiB) and a body kept for the report
    // within 64 KiB: the peak is about that of a run of small replies, and well under
    // that of the same flood read within 16 MiB.
    assert!(flooded_peak * 2 < calm_peak * 3, "{summary}");
    assert!(loose_peak > flooded_peak + 8 * MIB, "{summary}");
}
