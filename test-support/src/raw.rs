//! A server on loopback that speaks raw HTTP/1.1 to the clients under test: it reads each
//! request whole (its head and its `Content-Length` body), counts it, then hands the
//! connection to a function that answers it, floods it, stalls or hangs up: the broken and
//! hostile servers of the tests. One thread per connection, so it serves a test on any
//! runtime (or none), and a function that blocks holds up only its own connection.

use std::{
    io::{Read as _, Write as _},
    net::{TcpListener, TcpStream},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

/// A request as it arrived.
#[derive(Debug)]
pub struct Request {
    /// The request line and the header lines, without the blank line that ends them.
    pub head: String,
    /// The body, as long as its `Content-Length` says.
    pub body: Vec<u8>,
}

impl Request {
    /// The request line: `POST /path?query HTTP/1.1`.
    pub fn line(&self) -> &str {
        self.head.lines().next().unwrap_or("")
    }
}

/// A running server.
pub struct RawServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The requests read whole so far.
    pub requests: Arc<AtomicUsize>,
}

impl RawServer {
    /// Starts on an ephemeral port; `respond` gets each connection after its first request.
    pub fn start(respond: impl Fn(TcpStream, Request) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&requests);
        let respond = Arc::new(respond);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (counter, respond) = (Arc::clone(&counter), Arc::clone(&respond));
                std::thread::spawn(move || {
                    if let Some(request) = read_request(&mut stream) {
                        counter.fetch_add(1, Ordering::SeqCst);
                        respond(stream, request);
                    }
                });
            }
        });
        Self { url, requests }
    }

    /// Answers every request with `body`, a JSON document made beforehand (so that a
    /// client's memory can be measured while it is sent).
    pub fn json(body: Arc<Vec<u8>>) -> Self {
        Self::start(move |mut stream, _| {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        })
    }

    /// How many requests arrived whole.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// One request off the connection; `None` if it closed (or failed) first.
fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&seen[..end]).into_owned();
        let length = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())
                    .flatten()
            })
            .unwrap_or(0);
        if seen.len() >= end + 4 + length {
            let body = seen[end + 4..end + 4 + length].to_vec();
            return Some(Request { head, body });
        }
    }
}
