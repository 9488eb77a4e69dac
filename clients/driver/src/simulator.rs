//! A `licensing-sim` process of its own for each run, on a free port of the loopback
//! interface, and the one request the checks send it (its journal, over plain HTTP/1.1).

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::toolchain::{self, run};

/// The most of a reply [`Simulator::journal`] reads: a journal at the simulator's default
/// capacity is a few megabytes.
pub const MAX_REPLY_BYTES: u64 = 64 << 20;

/// The variable naming a directory of binaries already built (`licensing-sim`,
/// `licensing-proxy`, `licensing`) that the checks run instead of building their own.
/// CI points it at the test build's, copied aside: what `cargo test --workspace` built
/// is what the pip and npm packages carry, and building the simulator again with its own
/// package's features alone is a second compile of it and the crates under it.
pub const BINARIES_VAR: &str = "LICENSING_BINARIES";

/// `name` in [`BINARIES_VAR`]'s directory, when that is set: an error when the binary is
/// not there, so that a mistyped directory never falls back to a build unnoticed.
pub fn prebuilt(name: &str) -> Result<Option<PathBuf>> {
    let Some(dir) = std::env::var_os(BINARIES_VAR) else {
        return Ok(None);
    };
    let path = Path::new(&dir).join(name);
    if !path.is_file() {
        bail!(
            "{BINARIES_VAR}={} has no {name}: build it, or unset {BINARIES_VAR} to let the \
             check build its own",
            path.parent().unwrap_or(Path::new("")).display()
        );
    }
    eprintln!("using {} ({BINARIES_VAR})", path.display());
    Ok(Some(path))
}

/// `licensing-sim`, built as `cargo run -p licensing-sim --features bin` builds it (or
/// the one of [`BINARIES_VAR`]); returns the binary.
pub fn build_simulator(root: &Path) -> Result<PathBuf> {
    if let Some(path) = prebuilt("licensing-sim")? {
        return Ok(path);
    }
    run(Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "-p",
            "licensing-sim",
            "--features",
            "bin",
            "--bin",
            "licensing-sim",
        ])
        .current_dir(root))?;
    Ok(toolchain::target_dir(root)?
        .join("debug")
        .join("licensing-sim"))
}

/// A `licensing-sim` process on a free port of the loopback interface, stopped on drop.
pub struct Simulator {
    child: Child,
    pub url: String,
}

impl Simulator {
    /// Starts `exe` with `args`, its defaults otherwise: the `LICENSING_SIM_*` variables of
    /// the environment (fault rates, latency, seed, …) are not passed on.
    pub fn start(exe: &Path, args: &[&str], log: &Path) -> Result<Simulator> {
        Self::start_with(exe, args, &[], log)
    }

    /// As [`Simulator::start`], with `env` set for it (a secret such as the admin token,
    /// kept out of its command line).
    pub fn start_with(
        exe: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        log: &Path,
    ) -> Result<Simulator> {
        let mut command = Command::new(exe);
        command.args(["--addr", "127.0.0.1:0"]).args(args);
        Self::spawn(command, env, exe, log)
    }

    /// Starts `exe` (`licensing-proxy`) in front of `upstream`, on a free loopback port.
    pub fn proxy(exe: &Path, upstream: &str, log: &Path) -> Result<Simulator> {
        let mut command = Command::new(exe);
        command.args(["--upstream", upstream, "--addr", "127.0.0.1:0"]);
        Self::spawn(command, &[], exe, log)
    }

    fn spawn(
        mut command: Command,
        env: &[(&str, &str)],
        exe: &Path,
        log: &Path,
    ) -> Result<Simulator> {
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("LICENSING_SIM_") {
                command.env_remove(name);
            }
        }
        command.envs(env.iter().copied());
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(fs::File::create(log)?)
            .spawn()
            .with_context(|| format!("cannot start {}", exe.display()))?;
        let stdout = child.stdout.take().context("licensing-sim stdout")?;
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = send.send(line);
        });
        let line = receive.recv_timeout(Duration::from_secs(30));
        let url = line
            .ok()
            .and_then(|l| l.trim().strip_prefix("listening on ").map(str::to_owned));
        let Some(url) = url else {
            let _ = child.kill();
            bail!(
                "licensing-sim did not say where it listens (its log: {})",
                log.display()
            );
        };
        eprintln!("licensing-sim listening on {url} (log: {})", log.display());
        Ok(Simulator { child, url })
    }

    /// The simulator's journal (`GET /__sandbox/v1/journal`).
    pub fn journal(&self) -> Result<Value> {
        let (status, body) = http_get(&self.url, "/__sandbox/v1/journal", MAX_REPLY_BYTES)?;
        if status != 200 {
            bail!("GET /__sandbox/v1/journal answered HTTP {status}");
        }
        serde_json::from_slice(&body).context("the journal is not JSON")
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One plain HTTP/1.1 GET (the simulator's admin API, on loopback): status and body, of
/// at most `limit` bytes in all.
fn http_get(base: &str, path: &str, limit: u64) -> Result<(u16, Vec<u8>)> {
    let authority = base
        .strip_prefix("http://")
        .with_context(|| format!("{base} is not an http:// URL"))?;
    let mut stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    stream.take(limit + 1).read_to_end(&mut raw)?;
    if raw.len() as u64 > limit {
        bail!("GET {path} answered more than {limit} bytes");
    }
    parse_response(&raw)
}

/// Status and body of a whole HTTP/1.1 response (`Content-Length`, chunked, or up to the
/// end of the connection).
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>)> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("an HTTP response without the end of its headers")?;
    let head = std::str::from_utf8(&raw[..split]).context("HTTP headers not UTF-8")?;
    let body = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .context("an HTTP response without a status")?;
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return Ok((status, dechunk(body)?));
    }
    if let Some(length) = header("content-length") {
        let length: usize = length.parse().context("a bad Content-Length")?;
        let body = body
            .get(..length)
            .context("an HTTP body shorter than its length")?;
        return Ok((status, body.to_vec()));
    }
    Ok((status, body.to_vec()))
}

fn dechunk(mut body: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a chunk without its size line")?;
        let size = std::str::from_utf8(&body[..end])?;
        let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
            .context("a bad chunk size")?;
        body = &body[end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(body.get(..size).context("a chunk cut short")?);
        body = body.get(size + 2..).context("a chunk cut short")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_read_by_length_or_chunks() {
        let by_length = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n{}{}extra";
        assert_eq!(parse_response(by_length).unwrap(), (200, b"{}{}".to_vec()));
        let chunked =
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (404, b"abcde".to_vec()));
        assert!(parse_response(b"HTTP/1.1 200 OK\r\n").is_err());
    }

    #[test]
    fn a_reply_longer_than_the_limit_fails() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            for _ in 0..2 {
                let (mut stream, _) = listener.accept().unwrap();
                // The whole request first: closing on unread bytes would reset the connection.
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
                    line.clear();
                }
                let body = "x".repeat(1000);
                let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n{body}");
                // The first client stops reading at its limit: the write may fail.
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        let error = http_get(&base, "/big", 100).unwrap_err().to_string();
        assert_eq!(error, "GET /big answered more than 100 bytes");
        let (status, body) = http_get(&base, "/big", 2000).unwrap();
        assert_eq!((status, body.len()), (200, 1000));
        server.join().unwrap();
    }
}
