//! What travels: the replies as a hand-written client reads them, the bare handler that
//! answers the same body, and a raw POST of it.

use std::time::Instant;

use bytes::Bytes;
use licensing_sdk::order::types as o;
use serde::Deserialize;
use serde_json::json;

use super::APP_TOKEN;

/// A batch reply as a hand-written client would read it.
#[derive(Deserialize)]
pub struct PlainReply {
    pub code: serde_json::Value,
    pub message: String,
    #[serde(default)]
    pub data: Vec<PlainResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct PlainResult {
    customer_id: String,
    license_order_id: String,
    sequence: i32,
}

/// The simulator's reply to `n` orders of `customer`, in its format (`LO-` and six
/// digits), for a size the simulator refused: the client side still has a reply to decode.
pub fn synthesized_reply(customer: &str, n: usize) -> Bytes {
    let data: Vec<_> = (1..=n)
        .map(|i| json!({"customerId": customer, "licenseOrderId": format!("LO-{:06}", i + 3), "sequence": i}))
        .collect();
    Bytes::from(
        serde_json::to_vec(&json!({"code": 0, "message": "success", "data": data})).unwrap(),
    )
}

/// What the bare handler answers to `n` orders: the simulator's reply shape and length,
/// one fixed result per order.
fn fixed_reply(n: usize) -> Vec<u8> {
    const ITEM: &[u8] = br#"{"customerId":"C100001","licenseOrderId":"LO-000001","sequence":1}"#;
    let mut out = Vec::with_capacity(48 + n * (ITEM.len() + 1));
    out.extend_from_slice(br#"{"code":0,"message":"success","data":["#);
    for i in 0..n {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(ITEM);
    }
    out.extend_from_slice(b"]}");
    out
}
/// `--bare-server`: serves the bare batch handler on a free port of 127.0.0.1 and prints
/// `listening on http://ADDR`.
pub fn bare_server() {
    use axum::handler::HandlerWithoutStateExt as _;
    async fn handle(req: axum::extract::Request) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        let body = match axum::body::to_bytes(req.into_body(), usize::MAX).await {
            Ok(body) => body,
            Err(e) => return (http::StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        };
        let n = match serde_json::from_slice::<o::BatchOrderRequest>(&body) {
            Ok(parsed) => parsed.order_list.len(),
            Err(e) => return (http::StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        };
        (
            [(http::header::CONTENT_TYPE, "application/json")],
            fixed_reply(n),
        )
            .into_response()
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            println!("listening on http://{}", listener.local_addr().unwrap());
            axum::serve(listener, handle.into_make_service())
                .await
                .unwrap();
        });
}

/// The bare handler in a child process (this binary), killed when dropped.
pub struct Bare {
    child: std::process::Child,
    pub url: String,
}

impl Bare {
    pub fn start() -> Self {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--bare-server")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("starting the bare handler");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .expect("the bare handler's address")
            .to_string();
        Self { child, url }
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw POST of `body`: the time to the last byte of the reply, the status, the reply.
pub async fn raw_post(http: &reqwest::Client, url: &str, body: &Bytes) -> (f64, u16, Bytes) {
    let url = format!("{url}&g_nonce={}", licensing_sdk::runtime::nonce());
    let t = Instant::now();
    let response = http
        .post(url)
        .header(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {APP_TOKEN}"),
        )
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body.clone())
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let reply = response.bytes().await.expect("a whole reply");
    (t.elapsed().as_secs_f64() * 1e6, status, reply)
}
