//! The call loop: one span per call, attempts repeated per the retry policy within the
//! deadline, a refused token replaced once, and the per-call options that override the
//! client's.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        PoisonError,
        atomic::{AtomicU16, AtomicU32, AtomicUsize, Ordering},
    },
    time::Duration,
};

use tracing::Instrument as _;

use super::{
    MAX_OPAQUE_VALUES, Operation, Runtime,
    hooks::{ATTEMPT, Attempt, Sent},
    reply::{Envelope, Raw, settle},
};
use crate::{
    Error,
    retry::{RetryPolicy, Verdict},
};

/// The future an operation's builder turns into when awaited.
pub type CallFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// Per-call settings that override the client's for one call, set with
/// `.call_options(…)` on any operation builder.
///
/// ```no_run
/// # async fn run(client: licensing_sdk::order::Client) -> Result<(), licensing_sdk::Error> {
/// use std::time::Duration;
/// use licensing_sdk::{CallOptions, RetryPolicy};
///
/// let customers = client
///     .query_enterprise()
///     .channel_code("CH01")
///     .channel_customer_id("CC-42")
///     .default_customer(licensing_sdk::DefaultCustomer::All)
///     .call_options(CallOptions::new().deadline(Duration::from_secs(5)).retry(RetryPolicy::Never))
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct CallOptions {
    timeout: Option<Duration>,
    deadline: Option<Duration>,
    retry: Option<RetryPolicy>,
}

impl CallOptions {
    /// No overrides.
    pub fn new() -> Self {
        Self::default()
    }

    /// Time allowed for each attempt of this call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Time allowed for this whole call, attempts and waits between them included.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// When to repeat this call's failed attempts.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }
}

/// An operation's builder with [`CallOptions`]; awaiting it sends the call.
#[derive(Debug)]
#[must_use = "a call does nothing until it is awaited"]
pub struct Configured<B> {
    builder: B,
    options: CallOptions,
}

/// `builder` with `options`: what the builders' `call_options` returns.
pub fn configure<B>(builder: B, options: CallOptions) -> Configured<B> {
    Configured { builder, options }
}

/// The builder and the options of a configured call, for the generated `IntoFuture`.
pub fn configured_parts<B>(configured: Configured<B>) -> (B, CallOptions) {
    (configured.builder, configured.options)
}

/// Sends an operation, retrying per the policy and within the deadline, and turns its
/// envelope into `Result`. One span per call, one event per attempt.
pub async fn call<B, R, F, Fut>(
    runtime: &Runtime,
    op: &'static Operation,
    builder: B,
    send: F,
    options: CallOptions,
) -> Result<R::Data, Error>
where
    B: Clone,
    R: Envelope,
    F: Fn(B) -> Fut,
    Fut: Future<Output = Raw<R>>,
{
    let retry = options.retry.as_ref().unwrap_or(&runtime.retry);
    // For messages: what bounds an attempt, when the SDK knows it.
    let timeout = options.timeout.or(runtime.timeout);
    let timeout_override = options.timeout;
    let deadline = options.deadline.or(runtime.deadline);
    let span = tracing::debug_span!(
        "licensing_call",
        operation = op.id,
        "http.request.method" = op.method.as_str(),
        "url.template" = op.path,
        "server.address" = runtime.origin.host_str().unwrap_or_default(),
        "server.port" = runtime.origin.port_or_known_default().unwrap_or_default(),
        attempts = tracing::field::Empty,
        outcome = tracing::field::Empty,
    );
    // The runtime's clock, the one the waits and the deadline run on (paused in tests).
    let started = tokio::time::Instant::now();
    let attempts = AtomicU32::new(0);
    let attempts_made = &attempts;
    let work = async move {
        let mut replaced = [false; 2];
        loop {
            let attempt = attempts_made.fetch_add(1, Ordering::Relaxed) + 1;
            let (result, verdict, retry_after, status, sent) =
                one_attempt::<B, R, F, Fut>(op, &builder, &send, timeout_override, timeout).await;
            // A refused token (an expired one, most often) means the request was not
            // applied: if its provider has another, the call is repeated at once with it,
            // whatever the operation and the policy. Once per token, so a provider that
            // keeps supplying refused tokens cannot loop; outside the policy's count.
            if let Err(error) = &result
                && runtime.invalidate_refused(error, &sent, &mut replaced)
            {
                attempt_event(op, attempt, status, &result, Some(Duration::ZERO));
                continue;
            }
            let counted = attempt - replaced.iter().map(|&r| u32::from(r)).sum::<u32>();
            let mut delay = retry.delay(
                verdict,
                op.idempotent,
                counted,
                started.elapsed(),
                retry_after,
            );
            // A wait that would end past the deadline is not started: the last error says
            // more than "deadline exceeded".
            if let (Some(d), Some(deadline)) = (delay, deadline)
                && started.elapsed() + d >= deadline
            {
                delay = None;
            }
            attempt_event(op, attempt, status, &result, delay);
            let Some(delay) = delay else {
                let span = tracing::Span::current();
                // Without a subscriber that wants the span, the outcome's name is not built.
                if !span.is_disabled() {
                    span.record("attempts", attempt);
                    span.record("outcome", outcome(&result).as_str());
                }
                return result;
            };
            tokio::time::sleep(delay).await;
        }
    };
    match deadline {
        // Without a subscriber that wants the span, entering and leaving it on every poll
        // would be all it did.
        None if span.is_disabled() => work.await,
        None => work.instrument(span).await,
        Some(deadline) => match tokio::time::timeout(deadline, work.instrument(span.clone())).await
        {
            Ok(result) => result,
            Err(_) => {
                let attempts = attempts.load(Ordering::Relaxed);
                span.record("attempts", attempts);
                span.record("outcome", "deadline_exceeded");
                Err(Error::DeadlineExceeded {
                    operation: op.id,
                    deadline,
                    attempts,
                })
            }
        },
    }
}

/// Sends one attempt with its own [`Attempt`](super::hooks::Attempt) state: its result,
/// what it allows, the wait the server asked for, the HTTP status it got (0 if none) and
/// the tokens it sent.
async fn one_attempt<B, R, F, Fut>(
    op: &'static Operation,
    builder: &B,
    send: &F,
    timeout_override: Option<Duration>,
    timeout: Option<Duration>,
) -> (Result<R::Data, Error>, Verdict, Option<Duration>, u16, Sent)
where
    B: Clone,
    R: Envelope,
    F: Fn(B) -> Fut,
    Fut: Future<Output = Raw<R>>,
{
    let state = Box::new(Attempt {
        timeout_override,
        status: AtomicU16::new(0),
        redirected: std::sync::Mutex::new(None),
        sent: std::sync::Mutex::default(),
        opaque_left: AtomicUsize::new(MAX_OPAQUE_VALUES),
    });
    let (raw, status, redirected, sent) = ATTEMPT
        .scope(state, async {
            let raw = send(builder.clone()).await;
            ATTEMPT.with(|a| {
                let redirected = a
                    .redirected
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                let sent =
                    std::mem::take(&mut *a.sent.lock().unwrap_or_else(PoisonError::into_inner));
                (raw, a.status.load(Ordering::Relaxed), redirected, sent)
            })
        })
        .await;
    let (result, verdict, retry_after) = match redirected {
        Some(location) => (
            Err(Error::Redirect {
                operation: op.id,
                status,
                location: Some(location),
            }),
            Verdict::Final,
            None,
        ),
        None => settle::<R>(op, raw, status, timeout).await,
    };
    (result, verdict, retry_after, status, sent)
}

fn outcome<T>(result: &Result<T, Error>) -> String {
    match result {
        Ok(_) => "ok".to_string(),
        Err(e) => e.kind_name(),
    }
}

/// One event per attempt, with the OpenTelemetry HTTP client names where they apply.
fn attempt_event<T>(
    op: &Operation,
    attempt: u32,
    status: u16,
    result: &Result<T, Error>,
    retry_in: Option<Duration>,
) {
    let retry = if retry_in.is_some() { "retry" } else { "stop" };
    let retry_delay_ms = retry_in.map_or(0, |d| d.as_millis() as u64);
    let code = result
        .as_ref()
        .err()
        .and_then(Error::code)
        .map(ToString::to_string);
    let error_type = result.as_ref().err().map(Error::kind_name);
    macro_rules! event {
        ($($fields:tt)*) => {
            tracing::debug!(
                "http.request.method" = op.method.as_str(),
                "url.template" = op.path,
                "http.request.resend_count" = attempt - 1,
                attempt,
                retry,
                retry_delay_ms,
                $($fields)*
                "attempt finished"
            )
        };
    }
    match (status, error_type, code) {
        (0, Some(error), _) => event!("error.type" = error.as_str(),),
        (status, None, _) => event!("http.response.status_code" = status,),
        (status, Some(error), None) => {
            event!(
                "http.response.status_code" = status,
                "error.type" = error.as_str(),
            )
        }
        (status, Some(error), Some(code)) => event!(
            "http.response.status_code" = status,
            "error.type" = error.as_str(),
            code = code.as_str(),
        ),
    }
}
