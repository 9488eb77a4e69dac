//! An upstream written for one test, on loopback: raw HTTP/1.1 over tokio, each request
//! (its head as text, its body) answered by the test's function; keep-alive, as the
//! proxy's pool expects.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};

/// A request as the stub read it.
pub struct Request {
    /// The request line and headers, as sent.
    pub head: String,
    pub body: Vec<u8>,
}

impl Request {
    /// `METHOD /path?query`.
    pub fn line(&self) -> &str {
        self.head.lines().next().unwrap_or_default()
    }
}

/// A reply: status, extra headers, body (sent with its `Content-Length`, or in 64 KiB
/// chunks of `Transfer-Encoding: chunked` when `chunked`).
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub chunked: bool,
}

impl Reply {
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.into(),
            chunked: false,
        }
    }

    /// The same, its length not declared: sent in chunks.
    pub fn chunked(mut self) -> Self {
        self.chunked = true;
        self
    }
}

/// A running stub: its base URL, and how many requests it has answered.
pub struct Stub {
    pub url: String,
    answered: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Stub {
    pub fn answered(&self) -> usize {
        self.answered.load(Ordering::SeqCst)
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a stub answering each request with `answer`.
pub async fn start(answer: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Stub {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = Arc::new(answer);
    let answered = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&answered);
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let answer = Arc::clone(&answer);
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut buffer: Vec<u8> = Vec::new();
                loop {
                    // The head: up to the blank line.
                    let end = loop {
                        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                            break at + 4;
                        }
                        let mut chunk = [0u8; 16 * 1024];
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            let (name, value) = l.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    while buffer.len() < end + length {
                        let mut chunk = vec![0u8; 256 * 1024];
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let body = buffer[end..end + length].to_vec();
                    buffer.drain(..end + length);
                    let reply = answer(&Request { head, body });
                    counter.fetch_add(1, Ordering::SeqCst);
                    let length = if reply.chunked {
                        "transfer-encoding: chunked".to_string()
                    } else {
                        format!("content-length: {}", reply.body.len())
                    };
                    let mut out = format!(
                        "HTTP/1.1 {} X\r\ncontent-type: application/json\r\n{length}\r\n",
                        reply.status,
                    );
                    for (name, value) in &reply.headers {
                        out.push_str(&format!("{name}: {value}\r\n"));
                    }
                    out.push_str("\r\n");
                    if socket.write_all(out.as_bytes()).await.is_err() {
                        return;
                    }
                    let sent = if reply.chunked {
                        let mut sent = Ok(());
                        for piece in reply.body.chunks(64 * 1024) {
                            sent = async {
                                socket
                                    .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                                    .await?;
                                socket.write_all(piece).await?;
                                socket.write_all(b"\r\n").await
                            }
                            .await;
                            if sent.is_err() {
                                break;
                            }
                        }
                        match sent {
                            Ok(()) => socket.write_all(b"0\r\n\r\n").await,
                            e => e,
                        }
                    } else {
                        socket.write_all(&reply.body).await
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
        }
    });
    Stub {
        url,
        answered,
        task,
    }
}
