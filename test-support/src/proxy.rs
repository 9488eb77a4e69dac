//! A small HTTP proxy on loopback that only tunnels (`CONNECT host:port`), counting the
//! tunnels it opened and the targets asked for.

use std::sync::{Arc, Mutex};

use tokio::{
    io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader},
    net::{TcpListener, TcpStream},
};

/// A running tunnelling proxy.
pub struct ConnectProxy {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Every `CONNECT` target, in order.
    pub targets: Arc<Mutex<Vec<String>>>,
}

impl ConnectProxy {
    /// Starts on an ephemeral port of the current runtime.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let url = format!("http://{}", listener.local_addr().expect("proxy address"));
        let targets = Arc::new(Mutex::new(Vec::new()));
        let seen = targets.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(tunnel(client, seen.clone()));
            }
        });
        Self { url, targets }
    }

    /// The targets asked for so far.
    pub fn targets(&self) -> Vec<String> {
        self.targets.lock().unwrap().clone()
    }
}

async fn tunnel(client: TcpStream, seen: Arc<Mutex<Vec<String>>>) {
    let mut client = BufReader::new(client);
    let mut line = String::new();
    if client.read_line(&mut line).await.is_err() {
        return;
    }
    // The rest of the request head.
    loop {
        let mut header = String::new();
        match client.read_line(&mut header).await {
            Ok(0) | Err(_) => return,
            Ok(_) if header == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let mut parts = line.split_whitespace();
    let (Some("CONNECT"), Some(target)) = (parts.next(), parts.next()) else {
        let _ = client
            .get_mut()
            .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    };
    seen.lock().unwrap().push(target.to_string());
    let Ok(mut upstream) = TcpStream::connect(target).await else {
        let _ = client
            .get_mut()
            .write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    };
    if client
        .get_mut()
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let mut client = client.into_inner();
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}
