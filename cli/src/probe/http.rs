//! The probe's requests: built exactly as a check asks (credentials, `g_nonce` and
//! `Content-Type` included or not), sent at a polite pace, within a bounded total, with a
//! backoff on `429` (and `503` with `Retry-After`), never following a redirect, every
//! reply read within a size and a time bound. Every exchange is kept, redacted, for the
//! report and the HAR recording.

use std::{
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime},
};

use licensing_sdk::operations::Service;
use reqwest::Method;
use tokio::time::Instant;

use super::redact::Secrets;

/// Requests a second unless `--rate` says otherwise: low, for a shared tenant.
pub const DEFAULT_RATE: f64 = 2.0;
/// The most requests a run sends unless `--max-requests` says otherwise.
pub const DEFAULT_MAX_REQUESTS: u64 = 300;
/// The most bytes of a reply read unless `--max-reply-bytes` says otherwise.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 1024 * 1024;
/// Time allowed for one request and its reply unless `--timeout` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many times a request refused with `429` is sent again.
pub const RETRIES: u32 = 3;
/// The longest a `Retry-After` is waited for; a longer one ends the request's retries.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The bounds of a run's traffic.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub rate: f64,
    pub max_requests: u64,
    pub max_reply_bytes: usize,
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            rate: DEFAULT_RATE,
            max_requests: DEFAULT_MAX_REQUESTS,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// A request as a check builds it.
#[derive(Clone, Debug)]
pub struct Request {
    pub service: Service,
    /// The `operationId` it goes to.
    pub operation: String,
    pub method: Method,
    /// The path's segments after the service's base URL, each encoded when sent.
    pub segments: Vec<String>,
    /// Query parameters in order, `g_nonce` included when the check sends one.
    pub query: Vec<(String, String)>,
    /// Headers, credentials included, `Content-Type` when the check sends one.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// A reply, as much of it as the bounds let be read.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    /// A redirect's target, which is never followed.
    pub location: Option<String>,
    /// A `429`'s or `503`'s `Retry-After`.
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
    /// The body was longer than the bound, and was cut there.
    pub cut: bool,
}

impl Reply {
    /// The body as JSON, when it is.
    pub fn json(&self) -> Option<serde_json::Value> {
        if self.cut {
            return None;
        }
        serde_json::from_slice(&self.body).ok()
    }
}

/// What became of a request.
#[derive(Clone, Debug)]
pub enum Answer {
    Reply(Reply),
    /// It never left: the connection could not be made.
    NotSent(String),
    /// It may have been processed: no (whole) reply came.
    Lost(String),
}

/// An exchange as kept: redacted, bodies bounded.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    pub operation: String,
    pub method: String,
    pub url: String,
    pub query: Vec<(String, String)>,
    pub request_headers: Vec<(String, String)>,
    pub request_body: Option<String>,
    /// 0 when there was no reply.
    pub status: u16,
    pub reply_body: Option<String>,
    /// Why there was no reply, or what was wrong with it (cut, a redirect).
    pub note: Option<String>,
    #[serde(skip)]
    pub started: SystemTime,
    #[serde(skip)]
    pub duration: Duration,
}

/// The run's total is spent: the request was not sent.
#[derive(Debug)]
pub struct Spent(pub u64);

/// The sender of a run against one deployment.
pub struct Http {
    client: reqwest::Client,
    order: reqwest::Url,
    member: reqwest::Url,
    limits: Limits,
    next: tokio::sync::Mutex<Option<Instant>>,
    sent: AtomicU64,
    secrets: Mutex<Secrets>,
    log: Mutex<Vec<Shown>>,
    /// Set by a signal: no new request but undos (and the reads they make) is sent.
    stop: Mutex<Option<(String, u8)>>,
}

impl Http {
    /// A sender to these base URLs, `ca` a PEM file of roots to trust besides the system's.
    pub fn new(
        order: &str,
        member: &str,
        limits: Limits,
        secrets: Secrets,
        ca: Option<&[u8]>,
    ) -> Result<Self, String> {
        let url = |name: &str, text: &str| {
            let url = reqwest::Url::parse(text.trim_end_matches('/'))
                .map_err(|e| format!("{name}: `{text}` is not a URL: {e}"))?;
            if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
                return Err(format!("{name}: `{text}` is not an http(s) base URL"));
            }
            Ok(url)
        };
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!(
                "licensing-cli/",
                env!("CARGO_PKG_VERSION"),
                " probe"
            ))
            .connect_timeout(limits.timeout.min(Duration::from_secs(10)))
            .timeout(limits.timeout);
        if let Some(pem) = ca {
            let cert = reqwest::Certificate::from_pem(pem)
                .map_err(|e| format!("LICENSING_CA_FILE: not a PEM certificate: {e}"))?;
            builder = builder.add_root_certificate(cert);
        }
        Ok(Http {
            client: builder
                .build()
                .map_err(|e| format!("the HTTP client: {e}"))?,
            order: url("order URL", order)?,
            member: url("member URL", member)?,
            limits,
            next: tokio::sync::Mutex::new(None),
            sent: AtomicU64::new(0),
            secrets: Mutex::new(secrets),
            log: Mutex::new(Vec::new()),
            stop: Mutex::new(None),
        })
    }

    /// A credential the run sends, kept out of everything it keeps from now on.
    pub fn secret(&self, value: &str) {
        self.secrets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(value);
    }

    /// From now on only undos are sent: `why` says what stopped the run, `code` the exit
    /// code it calls for.
    pub fn stop(&self, why: String, code: u8) {
        self.stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert((why, code));
    }

    /// What stopped the run, if something did.
    pub fn stopping(&self) -> Option<String> {
        self.stopped().map(|(why, _)| why)
    }

    /// What stopped the run and the exit code it calls for.
    pub fn stopped(&self) -> Option<(String, u8)> {
        self.stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many requests were sent.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// The exchanges so far, redacted.
    pub fn exchanges(&self) -> Vec<Shown> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many exchanges are kept: a check's own start after this index.
    pub fn mark(&self) -> usize {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The exchanges since `mark`.
    pub fn since(&self, mark: usize) -> Vec<Shown> {
        let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        log.get(mark..).map(<[Shown]>::to_vec).unwrap_or_default()
    }

    /// The base URL of a service.
    pub fn base(&self, service: Service) -> &reqwest::Url {
        match service {
            Service::Order => &self.order,
            Service::Member => &self.member,
        }
    }

    /// Sends `request` (again after a `429`, as its `Retry-After` says, at most
    /// [`RETRIES`] times), at the run's pace; refused unsent once the run's total is spent.
    pub async fn send(&self, request: &Request) -> Result<Answer, Spent> {
        if let Some(why) = self.stopping() {
            return Ok(Answer::NotSent(why));
        }
        self.send_within(request, true).await
    }

    /// Sends an undo, or a read an undo needs: whatever stopped the run, and beyond its
    /// total (undos are bounded by the writes, which the total bounds).
    pub async fn send_undo(&self, request: &Request) -> Answer {
        match self.send_within(request, false).await {
            Ok(answer) => answer,
            Err(Spent(_)) => unreachable!("an undo is not counted against the total"),
        }
    }

    async fn send_within(&self, request: &Request, counted: bool) -> Result<Answer, Spent> {
        let mut attempt = 0;
        loop {
            if counted && self.sent.fetch_add(1, Ordering::SeqCst) >= self.limits.max_requests {
                self.sent.fetch_sub(1, Ordering::SeqCst);
                return Err(Spent(self.limits.max_requests));
            }
            if !counted {
                self.sent.fetch_add(1, Ordering::SeqCst);
            }
            self.pace().await;
            let answer = self.once(request).await;
            let wait = match &answer {
                Answer::Reply(reply) => backoff(reply, attempt),
                _ => None,
            };
            match wait {
                Some(wait) if attempt < RETRIES => {
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                }
                _ => return Ok(answer),
            }
        }
    }

    /// Waits for the request's turn: one every `1 / rate` seconds.
    async fn pace(&self) {
        let interval = Duration::from_secs_f64(1.0 / self.limits.rate);
        let at = {
            let mut next = self.next.lock().await;
            let now = Instant::now();
            let at = next.map_or(now, |n| n.max(now));
            *next = Some(at + interval);
            at
        };
        tokio::time::sleep_until(at).await;
    }

    fn url(&self, request: &Request) -> reqwest::Url {
        let mut url = self.base(request.service).clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(&request.segments);
        }
        if !request.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&request.query);
        }
        url
    }

    async fn once(&self, request: &Request) -> Answer {
        let url = self.url(request);
        let started = SystemTime::now();
        let clock = std::time::Instant::now();
        let mut builder = self.client.request(request.method.clone(), url.clone());
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let answer = match builder.send().await {
            Err(e) if e.is_connect() => Answer::NotSent(format!("cannot connect: {}", cause(&e))),
            Err(e) if e.is_builder() => Answer::NotSent(format!("cannot build it: {}", cause(&e))),
            Err(e) => Answer::Lost(transport(&e)),
            Ok(response) => read(response, self.limits.max_reply_bytes).await,
        };
        self.keep(request, &url, &answer, started, clock.elapsed());
        answer
    }

    fn keep(
        &self,
        request: &Request,
        url: &reqwest::Url,
        answer: &Answer,
        started: SystemTime,
        duration: Duration,
    ) {
        let s = self
            .secrets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let s = &s;
        let mut shown_url = url.clone();
        let query: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| (s.text(&k), s.param(&k, &v)))
            .collect();
        shown_url.set_query(None);
        if !query.is_empty() {
            shown_url.query_pairs_mut().extend_pairs(&query);
        }
        let (status, reply_body, note) = match answer {
            Answer::Reply(r) => (
                r.status,
                s.body(&r.body),
                match (&r.location, r.cut) {
                    (Some(to), _) => Some(format!("a redirect to {}, not followed", s.text(to))),
                    (None, true) => Some(format!(
                        "the reply was longer than {} bytes and was cut there",
                        self.limits.max_reply_bytes
                    )),
                    (None, false) => None,
                },
            ),
            Answer::NotSent(why) | Answer::Lost(why) => (0, None, Some(s.text(why))),
        };
        let shown = Shown {
            operation: request.operation.clone(),
            method: request.method.to_string(),
            url: s.text(shown_url.as_str()),
            query,
            request_headers: request
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), s.header(k, v)))
                .collect(),
            request_body: request.body.as_deref().and_then(|b| s.body(b)),
            status,
            reply_body,
            note,
            started,
            duration,
        };
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(shown);
    }
}

/// How long to wait before sending again: a `429`, or a `503` that says when, waits its
/// `Retry-After` (whole seconds), else 1, 2, 4 s; longer than [`MAX_RETRY_AFTER`] is not
/// waited for.
pub fn backoff_after(status: u16, retry_after: Option<&str>, attempt: u32) -> Option<Duration> {
    let given = retry_after
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let wait = match (status, given) {
        (429, Some(wait)) | (503, Some(wait)) => wait,
        (429, None) => Duration::from_secs(1 << attempt.min(6)),
        _ => return None,
    };
    (wait <= MAX_RETRY_AFTER).then_some(wait)
}

fn backoff(reply: &Reply, attempt: u32) -> Option<Duration> {
    backoff_after(reply.status, reply.retry_after.as_deref(), attempt)
}

async fn read(mut response: reqwest::Response, max: usize) -> Answer {
    let status = response.status().as_u16();
    let header = |name: reqwest::header::HeaderName| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.chars().take(2048).collect::<String>())
    };
    let location = (300..400)
        .contains(&status)
        .then(|| header(reqwest::header::LOCATION).unwrap_or_default());
    let retry_after = matches!(status, 429 | 503)
        .then(|| header(reqwest::header::RETRY_AFTER))
        .flatten();
    let mut body = Vec::new();
    let mut cut = false;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = max - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    cut = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => return Answer::Lost(format!("reading the reply: {}", transport(&e))),
        }
    }
    Answer::Reply(Reply {
        status,
        location,
        retry_after,
        body,
        cut,
    })
}

fn transport(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out: it may have been processed".into()
    } else {
        format!("{}: it may have been processed", cause(e))
    }
}

/// An error's innermost cause: reqwest's own text names the URL, query and all.
fn cause(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_429_waits_as_told_and_other_statuses_are_not_retried() {
        assert_eq!(
            backoff_after(429, Some("7"), 0),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            backoff_after(503, Some(" 2 "), 0),
            Some(Duration::from_secs(2))
        );
        assert_eq!(backoff_after(503, None, 0), None);
        assert_eq!(backoff_after(429, None, 2), Some(Duration::from_secs(4)));
        assert_eq!(backoff_after(429, Some("3600"), 0), None);
        assert_eq!(backoff_after(500, Some("1"), 0), None);
        assert_eq!(backoff_after(200, None, 0), None);
    }

    /// The pace on paused time: five requests at two a second take two seconds.
    #[tokio::test(start_paused = true)]
    async fn requests_keep_the_rate() {
        let limits = Limits {
            rate: 2.0,
            ..Limits::default()
        };
        let http = Http::new(
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            limits,
            Secrets::default(),
            None,
        )
        .unwrap();
        let start = Instant::now();
        for _ in 0..5 {
            http.pace().await;
        }
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }
}
