//! Set-up calls and checks over HTTP/1.1: one request per connection (`Connection:
//! close`) with the benchmark's token, read whole. Only for calls outside any
//! measurement, so std's sockets are enough.

use std::{
    io::{Read, Write},
    time::Duration,
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::APP_TOKEN;

/// A set-up or check reply is a few hundred bytes; anything past 1 MiB is not one.
const MAX_REPLY: u64 = 1 << 20;

/// The read endpoint answers a real customer list, not an empty one.
pub fn bind_customer(url: &str) -> Result<()> {
    let body = json!({
        "channelCode": "CH01", "channelCustomerId": "CC-42", "customerName": "Acme Robotics",
        "branchName": "North", "enterpriseName": "Acme Robotics", "passwordMobile": "13800000000"
    });
    let url = format!(
        "{url}/order/api/order/v1/enterprise/user/bind?g_nonce=bench-setup-{}",
        std::process::id()
    );
    let reply = post_json(&url, &body)?;
    if reply["code"] != 0 {
        bail!("could not bind the benchmark customer: {reply}");
    }
    Ok(())
}

/// One JSON POST to `url` (`http://HOST:PORT/PATH?QUERY`); the reply's body as JSON.
pub fn post_json(url: &str, body: &Value) -> Result<Value> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("not an http:// URL: {url}"))?;
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (_, _, reply) = request(
        &format!("http://{host}"),
        "POST",
        target,
        Some(&body.to_string()),
    )
    .with_context(|| format!("POST {url}"))?;
    serde_json::from_slice(&reply).with_context(|| format!("the reply of {url} is not JSON"))
}

/// One HTTP/1.1 request with the benchmark's headers over a connection of its own
/// (`Connection: close`): the status, the content type and the body (by its length,
/// chunked, or up to the close).
pub fn request(
    url: &str,
    method: &str,
    target: &str,
    body: Option<&str>,
) -> Result<(u16, String, Vec<u8>)> {
    request_as(url, method, target, body, APP_TOKEN, MAX_REPLY)
}

/// [`request`] with `token` as the bearer, reading at most `max_reply` bytes of reply.
pub fn request_as(
    url: &str,
    method: &str,
    target: &str,
    body: Option<&str>,
    token: &str,
    max_reply: u64,
) -> Result<(u16, String, Vec<u8>)> {
    let host = url
        .strip_prefix("http://")
        .with_context(|| format!("not an http:// URL: {url}"))?;
    let mut stream =
        std::net::TcpStream::connect(host).with_context(|| format!("connecting to {host}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.unwrap_or_default();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {token}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut reply = Vec::new();
    stream.take(max_reply).read_to_end(&mut reply)?;
    let end = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .with_context(|| format!("no complete reply: {:?}", String::from_utf8_lossy(&reply)))?;
    let head = String::from_utf8_lossy(&reply[..end]).into_owned();
    let rest = &reply[end + 4..];
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse::<u16>().ok())
        .with_context(|| format!("no status line: {head:?}"))?;
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let body = if let Some(length) = header("content-length") {
        let length: usize = length.parse().context("content-length")?;
        rest.get(..length)
            .context("a reply shorter than its content-length")?
            .to_vec()
    } else if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        dechunk(rest)?
    } else {
        rest.to_vec()
    };
    Ok((status, header("content-type").unwrap_or_default(), body))
}

/// A chunked body's content.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a chunk without its size line")?;
        let size = std::str::from_utf8(&rest[..line_end])?;
        let size = usize::from_str_radix(size.split(';').next().unwrap_or_default().trim(), 16)
            .context("a chunk size")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(rest.get(..size).context("a chunk cut short")?);
        rest = rest.get(size + 2..).context("a chunk cut short")?;
    }
}

#[cfg(test)]
mod tests {
    use super::dechunk;

    #[test]
    fn chunked_bodies() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert!(dechunk(b"5\r\nab").is_err());
    }
}
