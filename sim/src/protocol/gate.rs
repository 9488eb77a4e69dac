//! The checks every operation shares, then the operation, then its reply.

use std::{collections::HashMap, sync::Arc, time::Instant};

use axum::{
    body::{Body, Bytes},
    http::{StatusCode, header, request::Parts},
    response::Response,
};
use licensing_host::server::{BodyUnread, DropConnection, ReadBody};
use licensing_sdk::{ErrorCode, operations::Service as OpService};

use super::{
    Answer, Gate, auth,
    hooks::{Effect, Exchange, Intercept},
    nonce,
};
use crate::ops::{self, Call, Failure, InvalidPath, Query, malformed};

/// A request body at least this large is run on the runtime's blocking threads, not on the
/// worker that read it: a 1,000-order batch takes milliseconds of CPU (a 50,000-order one
/// over a second) that would hold up every other connection on that worker. It also keeps
/// the allocations of one batch after another on the same thread, mostly, so that memory
/// one batch frees is what the next one takes (on two workers, each batch on whichever
/// last read from the socket, a 1,000-order batch spent a quarter of its time in the
/// kernel zeroing fresh pages).
const OFFLOAD_BYTES: usize = 256 * 1024;

/// Every request to an operation passes here: the checks every operation shares
/// (latency, credentials, `Content-Type`, `g_nonce`, then the hooks: injected faults and
/// scripted fault rules), then the operation, then the hooks' record of the exchange. A
/// failed check is answered with the operation's own reply type and a documented code.
/// The path, the query and the body are read once (the path by the router; the body by
/// the server, within its budget, or why it could not be, which the operation answers)
/// and handed to the operation as a [`Call`].
pub(crate) async fn gate(
    gate: &Gate,
    entry: &ops::Entry,
    path: Result<HashMap<String, String>, InvalidPath>,
    parts: Parts,
    body: ReadBody,
) -> Response {
    let started = Instant::now();
    let time = gate.db.clock.now_ms();
    let body = body.map_err(|e| format!("Failed to buffer the request body: {e}"));
    let records = gate.hooks.records();
    // Shared with the record only when it keeps anything (a clone of received bytes
    // allocates once).
    let kept = records.then(|| body.as_ref().ok().cloned()).flatten();
    let (mut answer, fault, mut effect) = checks(gate, entry, path, &parts, body).await;
    if let Some(Effect::Rewrite(_)) = &effect
        && let Some(Effect::Rewrite(rewrite)) = effect.take()
        && let Some(body) = (rewrite.0)(&answer.body)
    {
        answer.body = body.into();
    }
    if records {
        let dropped = matches!(effect, Some(Effect::Drop));
        gate.hooks.record(Exchange {
            time,
            operation: entry.op.id,
            target: redacted_target(&parts),
            method: parts.method,
            request_body: kept.unwrap_or_default(),
            reply: (!dropped).then(|| (answer.status, answer.body.clone())),
            fault,
            duration: started.elapsed(),
        });
    }
    let response = answer.into_response();
    match effect {
        None => response,
        Some(effect) => apply(effect, response).await,
    }
}

/// The request's path and query with every credential's value replaced: nothing the
/// hooks keep holds one.
fn redacted_target(parts: &Parts) -> Box<str> {
    let path = parts.uri.path();
    let Some(query) = parts.uri.query() else {
        return path.into();
    };
    let secret = |pair: &str| {
        let name = memchr::memchr(b'=', pair.as_bytes()).map_or(pair, |at| &pair[..at]);
        // Names are rarely encoded: decoded only when they are.
        if name.contains('%') {
            ops::is_secret(&percent_encoding::percent_decode_str(name).decode_utf8_lossy())
        } else {
            ops::is_secret(name)
        }
    };
    // Split at memory speed: `str::split` cost 500 instructions a parameter (callgrind).
    let mut start = 0;
    let mut pairs = memchr::memchr_iter(b'&', query.as_bytes())
        .chain([query.len()])
        .map(|end| {
            let pair = &query[start..end];
            start = end + 1;
            pair
        });
    if !pairs.any(secret) {
        return parts
            .uri
            .path_and_query()
            .map_or_else(|| path.into(), |pq| pq.as_str().into());
    }
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret(pair) => format!("{name}=[REDACTED]"),
            _ => pair.to_string(),
        })
        .collect();
    format!("{path}?{}", query.join("&")).into()
}

/// The first JSON string in `body` longer than `max` bytes: where it starts and its length.
/// Searches over the bytes alone, so that no field of any size is kept, echoed or decoded
/// before it is refused.
fn long_string(body: &[u8], max: usize) -> Option<(usize, usize)> {
    if body.len() <= max {
        return None;
    }
    // A string longer than `max` either spans a stretch of more than `max` bytes with no
    // quote in it, or holds an escaped quote. A batch body has neither, and two searches
    // that skip ahead rule both out without stopping at each of its many quotes.
    if !quote_free_stretch(body, max) && memchr::memmem::find(body, br#"\""#).is_none() {
        return None;
    }
    every_string(body, max)
}

/// Whether more than `max` bytes in a row of `body` hold no `"`. Each step looks back from
/// `max + 1` bytes ahead for the last quote; any longer stretch starts after it.
fn quote_free_stretch(body: &[u8], max: usize) -> bool {
    let mut from: usize = 0;
    while let Some(window) = body.get(from..from.saturating_add(max).saturating_add(1)) {
        match memchr::memrchr(b'"', window) {
            Some(last) => from += last + 1,
            None => return true,
        }
    }
    false
}

/// [`long_string`] by visiting every quote in turn.
fn every_string(body: &[u8], max: usize) -> Option<(usize, usize)> {
    // Every quote in turn, found at memory speed: outside a string one opens it, inside
    // one closes it unless it is escaped. Backslashes are rare, so a quote's escape is
    // looked at only when a backslash precedes it (an odd run of them escapes it).
    let mut open = None;
    for quote in memchr::memchr_iter(b'"', body) {
        let Some(start) = open else {
            open = Some(quote + 1);
            continue;
        };
        if body[quote - 1] == b'\\' && quote > start {
            let run = body[start..quote]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if run % 2 == 1 {
                continue;
            }
        }
        if quote - start > max {
            return Some((start, quote - start));
        }
        open = None;
    }
    open.filter(|&start| body.len() - start > max)
        .map(|start| (start, body.len() - start))
}

/// Whether a `Content-Type` header is present: the order document requires it on every
/// endpoint, GETs included.
fn has_content_type(parts: &Parts) -> bool {
    parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| !v.as_bytes().iter().all(u8::is_ascii_whitespace))
}

/// The shared checks, then the operation; with the id of a fault rule that fired and
/// what it still does to the reply.
async fn checks(
    gate: &Gate,
    entry: &ops::Entry,
    path: Result<HashMap<String, String>, InvalidPath>,
    parts: &Parts,
    body: Result<Bytes, String>,
) -> (Answer, Option<i64>, Option<Effect>) {
    let op = entry.op;
    let fail = |failure: Failure| Answer::from((entry.fail)(op, failure));
    let latency = gate.hooks.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let service = ops::Service::from(op.service);
    let Ok(path) = path else {
        return (
            fail(malformed(op, "a path parameter is not valid UTF-8")),
            None,
            None,
        );
    };
    if let Err(failure) = auth::authenticate(&gate.credentials, service, &parts.headers) {
        return (fail(failure), None, None);
    }
    if op.service == OpService::Order && !has_content_type(parts) {
        let failure = malformed(
            op,
            "Content-Type: the header is required on every order-service request \
             (`application/json`)",
        );
        return (fail(failure), None, None);
    }
    if let Ok(bytes) = &body
        && let Some((at, len)) = long_string(bytes, gate.max_string_bytes)
    {
        let failure = malformed(
            op,
            format!(
                "a string in the request body (at byte {at}) has {len} bytes; the simulator \
                 takes at most {} in one field (--max-string-bytes)",
                gate.max_string_bytes
            ),
        );
        return (fail(failure), None, None);
    }
    // The server did not read the body (its budget was taken, or the body was too slow):
    // a transient failure the SDK retries. Before the nonce check, so a retry may reuse it.
    if let Some(unread) = parts.extensions.get::<BodyUnread>() {
        let failure = Failure::new(ErrorCode::NetworkException, unread.0.clone());
        return (fail(failure), None, None);
    }
    let query = Query::parse(parts.uri.query());
    if let Err(failure) = nonce::check_nonce(&gate.nonces, op, &query) {
        return (fail(failure), None, None);
    }
    let offload = body.as_ref().is_ok_and(|b| b.len() >= OFFLOAD_BYTES);
    let call = Call::received(
        path,
        query,
        parts.headers.get(header::CONTENT_TYPE).cloned(),
        body,
    );
    let (rule, effect) = match gate.hooks.intercept(op, &call) {
        None => (None, None),
        Some(Intercept::Fail { rule, code, cause }) => {
            return (fail(Failure::new(code, cause)), rule, None);
        }
        Some(Intercept::Status { rule, status }) => {
            return (Answer::status(status), Some(rule), None);
        }
        Some(Intercept::Delay { rule, wait }) => {
            tokio::time::sleep(wait).await;
            (Some(rule), None)
        }
        Some(Intercept::Effect { rule, effect }) => (Some(rule), Some(effect)),
    };
    if !offload {
        return (Answer::from((entry.run)(&gate.db, &call)), rule, effect);
    }
    // As many at once as the machine has cores, as on the workers: a flood of large
    // bodies waits here, instead of decoding hundreds of batches into memory at once on
    // the blocking pool's threads. The turn goes with the task, which runs to its end
    // even when the client has gone.
    static RUNNING: std::sync::LazyLock<Arc<tokio::sync::Semaphore>> =
        std::sync::LazyLock::new(|| {
            let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
            Arc::new(tokio::sync::Semaphore::new(cores))
        });
    let Ok(turn) = Arc::clone(&RUNNING).acquire_owned().await else {
        unreachable!("the semaphore is never closed")
    };
    let db = Arc::clone(&gate.db);
    let run = entry.run;
    let running = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        run(&db, &call)
    })
    .await;
    let answer = match running {
        Ok(encoded) => Answer::from(encoded),
        // A handler's panic goes on as it would have on the worker.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // The runtime is shutting down.
        Err(_) => Answer::status(StatusCode::SERVICE_UNAVAILABLE),
    };
    (answer, rule, effect)
}

/// Does `effect` to a reply.
async fn apply(effect: Effect, response: Response) -> Response {
    {
        let (mut parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        match effect {
            Effect::Drop => {
                // A signal, not an unwind: the server's connection task reads it and closes
                // the connection with no answer. Unwinding the task did the same only where
                // panics unwind; under `panic = "abort"` it ended the process.
                let mut dropped = Response::new(Body::empty());
                dropped.extensions_mut().insert(DropConnection);
                dropped
            }
            // Applied before the exchange was recorded ([`gate`]).
            Effect::Rewrite(_) => Response::from_parts(parts, Body::from(bytes)),
            Effect::Malformed => {
                parts.status = StatusCode::OK;
                // Half a JSON document is never a JSON document.
                let half = bytes.slice(..bytes.len() / 2);
                Response::from_parts(parts, Body::from(half))
            }
            Effect::Truncate => {
                parts
                    .headers
                    .insert(header::CONTENT_LENGTH, bytes.len().into());
                let half = bytes.slice(..bytes.len() / 2);
                let chunks = futures_util::stream::iter([
                    Ok(half),
                    Err(std::io::Error::other("cut short by a fault rule")),
                ]);
                Response::from_parts(parts, Body::from_stream(chunks))
            }
            Effect::Slow(over) => {
                parts
                    .headers
                    .insert(header::CONTENT_LENGTH, bytes.len().into());
                const PIECES: usize = 10;
                let size = bytes.len().div_ceil(PIECES).max(1);
                let pause = over / PIECES as u32;
                let pieces: Vec<Bytes> = (0..bytes.len())
                    .step_by(size)
                    .map(|at| bytes.slice(at..(at + size).min(bytes.len())))
                    .collect();
                let stream =
                    futures_util::stream::unfold(pieces.into_iter(), move |mut rest| async move {
                        let piece = rest.next()?;
                        tokio::time::sleep(pause).await;
                        Some((Ok::<_, std::io::Error>(piece), rest))
                    });
                Response::from_parts(parts, Body::from_stream(stream))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{every_string, long_string, redacted_target};

    #[test]
    fn credentials_in_the_query_are_redacted_encoded_names_too() {
        let target = |uri: &str| {
            let (parts, ()) = axum::http::Request::builder()
                .uri(uri)
                .body(())
                .unwrap()
                .into_parts();
            redacted_target(&parts).to_string()
        };
        assert_eq!(target("/a/b"), "/a/b");
        assert_eq!(target("/a/b?x=1&g_nonce=n"), "/a/b?x=1&g_nonce=n");
        assert_eq!(
            target("/a?appKey=k1&g_nonce=n"),
            "/a?appKey=[REDACTED]&g_nonce=n"
        );
        assert_eq!(target("/a?x=1&%61ppKey=k1"), "/a?x=1&%61ppKey=[REDACTED]");
        assert_eq!(target("/a?PassWord=p"), "/a?PassWord=[REDACTED]");
    }

    #[test]
    fn long_strings_are_found_escapes_and_all() {
        let body = br#"{"a":"short","b":"0123456789"}"#;
        assert_eq!(long_string(body, 100), None, "the body is within the bound");
        assert_eq!(long_string(body, 9), Some((18, 10)));
        assert_eq!(long_string(body, 10), None);
        let escaped = br#"{"k":"ab\"cd"}"#;
        assert_eq!(
            long_string(escaped, 5),
            Some((6, 6)),
            "an escaped quote is inside"
        );
        let backslash = br#"{"k":"abc\\","l":"x"}"#;
        assert_eq!(
            long_string(backslash, 5),
            None,
            "an escaped backslash, then the closing quote"
        );
        assert_eq!(long_string(backslash, 4), Some((6, 5)));
        let unterminated = br#"{"a":"abcdefghijklmnop"#;
        assert_eq!(long_string(unterminated, 4), Some((6, 16)));
    }

    /// The skipping searches answer as the quote-by-quote scan does, over every body of
    /// quotes, backslashes and letters a small generator makes, at every bound.
    #[test]
    fn the_fast_path_answers_as_the_full_scan_does() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut found = 0;
        for _ in 0..20_000 {
            let len = (next() % 48) as usize;
            // Quotes rarer in some bodies than in others, so long strings occur too.
            let quote_odds = 2 + next() % 12;
            let body: Vec<u8> = (0..len)
                .map(|_| match next() % quote_odds {
                    0 => b'"',
                    1 => b'\\',
                    _ => b'a',
                })
                .collect();
            for max in 0..=len {
                let expected = every_string(&body, max);
                found += usize::from(expected.is_some());
                assert_eq!(
                    long_string(&body, max),
                    expected,
                    "{:?} at most {max}",
                    String::from_utf8_lossy(&body)
                );
            }
        }
        assert!(found > 10_000, "long strings found in {found} cases only");
    }
}
