//! When a failed attempt is repeated.
//!
//! | what happened | repeated? | wait |
//! |---|---|---|
//! | connect failure: the request never reached the server | yes, every operation | backoff |
//! | the server answered code `500` ("network exception, retry") | yes, every operation | backoff |
//! | HTTP 429 (a rate limit, usually a gateway's: the request was refused, not applied) | yes, every operation | `Retry-After`, else backoff |
//! | timeout, reset or dropped reply after the request was sent | only operations marked `x-idempotent: true` in the spec | backoff |
//! | HTTP 503 (a server or gateway error outside the platform's envelope: the request may have been applied) | only operations marked `x-idempotent: true` | `Retry-After`, else backoff |
//! | HTTP 500, 502 or 504 (as 503) | only operations marked `x-idempotent: true` | backoff |
//! | any other business error, validation error, undocumented status, undecodable reply | never | |
//! | a rejected TLS certificate, a redirect, a reply over `max_reply_bytes`, reply headers over the HTTP client's limits | never | |
//!
//! A deadline ([`crate::ClientBuilder::deadline`], [`crate::CallOptions::deadline`]) bounds
//! all attempts and waits together: a wait that would end past it is not started.
//!
//! Each attempt is a new request with a new `g_nonce`. Between attempts the client waits a
//! random delay between zero and `initial_delay × 2^(attempt−1)` (capped at `max_delay`:
//! "full jitter"), and stops after `max_attempts` attempts or once the next wait would pass
//! `max_elapsed` since the first attempt.
//!
//! A 429 or 503 with a `Retry-After` header (seconds, or an HTTP date) is repeated after
//! the wait the server asked for instead, no longer than [`MAX_RETRY_AFTER`]; the same
//! bounds apply (`max_attempts`, `max_elapsed`, the deadline): a server that asks for more
//! time than is left gets its error back at once. `Retry-After` on other statuses is
//! ignored.
//!
//! What an attempt's failure allows is decided from the failure alone
//! (`Verdict`, with the server's `Retry-After`); the policy then decides whether and when
//! to repeat from that, the operation's idempotency and the attempts made so far.

use std::time::{Duration, SystemTime};

/// The longest wait a `Retry-After` header obtains: a longer one is cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How a client repeats failed attempts; see the [module docs](self) for what is repeated.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryPolicy {
    /// Every failure is returned at once.
    Never,
    /// Jittered exponential backoff within bounds.
    Backoff(Backoff),
}

impl Default for RetryPolicy {
    /// [`Backoff::default`].
    fn default() -> Self {
        Self::Backoff(Backoff::default())
    }
}

/// Bounds of [`RetryPolicy::Backoff`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Attempts in all, the first included (1 means no retry).
    pub max_attempts: u32,
    /// Upper bound of the first wait.
    pub initial_delay: Duration,
    /// Upper bound of any wait.
    pub max_delay: Duration,
    /// No attempt starts later than this after the first one.
    pub max_elapsed: Duration,
}

impl Default for Backoff {
    /// 4 attempts, waits up to 200 ms, 400 ms, 800 ms (never above 5 s), within 30 s.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
            max_elapsed: Duration::from_secs(30),
        }
    }
}

/// What an attempt's failure allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Success, or a failure a repeat cannot fix.
    Final,
    /// The request never reached the server.
    NotSent,
    /// The server asked for a retry (code `500`).
    RetryRequested,
    /// The request may have been applied (timeout, lost reply, HTTP 500/502/503/504).
    MaybeApplied,
    /// The server refused the request without applying it (HTTP 429).
    RateLimited,
}

/// What an undocumented HTTP status allows.
pub(crate) fn status_verdict(status: u16) -> Verdict {
    match status {
        429 => Verdict::RateLimited,
        // A server error or a gateway in front of the platform: the request may or may
        // not have been applied, so only operations that cannot apply twice are repeated.
        500 | 502 | 503 | 504 => Verdict::MaybeApplied,
        _ => Verdict::Final,
    }
}

/// Whether a status with this verdict has its `Retry-After` honoured (429 and 503 only).
pub(crate) fn honours_retry_after(status: u16) -> bool {
    matches!(status, 429 | 503)
}

/// The wait a `Retry-After` value asks for, from `now`: whole seconds, or an HTTP date (a
/// date in the past is no wait). `None` for anything else.
pub(crate) fn retry_after(value: &[u8], now: SystemTime) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for a u64 is still "a long time".
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    let date = chrono::DateTime::parse_from_rfc2822(text).ok()?;
    let at = SystemTime::from(date);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

impl RetryPolicy {
    /// The wait before the next attempt, or `None` to stop: `retry_after` is the wait the
    /// server asked for, if any.
    pub(crate) fn delay(
        &self,
        verdict: Verdict,
        idempotent: bool,
        attempt: u32,
        elapsed: Duration,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let Self::Backoff(b) = self else { return None };
        match verdict {
            Verdict::Final => return None,
            Verdict::MaybeApplied if !idempotent => return None,
            _ => {}
        }
        if attempt >= b.max_attempts {
            return None;
        }
        let delay = match retry_after {
            Some(asked) => asked.min(MAX_RETRY_AFTER),
            None => b
                .initial_delay
                .saturating_mul(1u32 << (attempt - 1).min(20))
                .min(b.max_delay)
                // Full jitter, uniform in [0, 1): the nonces' random source, so that
                // jitter costs no dependency of its own; without it, half the delay.
                .mul_f64(unit_draw()),
        };
        (elapsed + delay <= b.max_elapsed).then_some(delay)
    }
}

/// A draw uniform in [0, 1) from the operating system's random source, 0.5 if it fails.
fn unit_draw() -> f64 {
    // The 53 high bits fill an f64's mantissa exactly.
    getrandom::u64().map_or(0.5, |bits| (bits >> 11) as f64 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy::Backoff(Backoff {
            max_attempts: 3,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(150),
            max_elapsed: Duration::from_secs(1),
        })
    }

    #[test]
    fn classification() {
        let p = policy();
        let zero = Duration::ZERO;
        assert!(p.delay(Verdict::Final, true, 1, zero, None).is_none());
        assert!(p.delay(Verdict::NotSent, false, 1, zero, None).is_some());
        assert!(
            p.delay(Verdict::RetryRequested, false, 1, zero, None)
                .is_some()
        );
        assert!(
            p.delay(Verdict::MaybeApplied, false, 1, zero, None)
                .is_none()
        );
        assert!(
            p.delay(Verdict::MaybeApplied, true, 1, zero, None)
                .is_some()
        );
        assert!(
            RetryPolicy::Never
                .delay(Verdict::NotSent, true, 1, zero, None)
                .is_none()
        );
    }

    #[test]
    fn bounds() {
        let p = policy();
        assert!(
            p.delay(Verdict::NotSent, true, 3, Duration::ZERO, None)
                .is_none(),
            "max_attempts"
        );
        assert!(
            p.delay(Verdict::NotSent, true, 1, Duration::from_secs(2), None)
                .is_none(),
            "max_elapsed"
        );
        for attempt in 1..3 {
            for _ in 0..200 {
                let d = p
                    .delay(Verdict::NotSent, true, attempt, Duration::ZERO, None)
                    .unwrap();
                let cap = Duration::from_millis(if attempt == 1 { 100 } else { 150 });
                assert!(d <= cap, "attempt {attempt}: {d:?} > {cap:?}");
            }
        }
    }

    #[test]
    fn statuses() {
        assert_eq!(status_verdict(429), Verdict::RateLimited);
        for status in [500, 502, 503, 504] {
            assert_eq!(status_verdict(status), Verdict::MaybeApplied, "{status}");
        }
        for status in [400, 401, 404, 501, 505] {
            assert_eq!(status_verdict(status), Verdict::Final, "{status}");
        }
        assert!(honours_retry_after(429) && honours_retry_after(503));
        assert!(!honours_retry_after(500) && !honours_retry_after(502));
    }

    #[test]
    fn retry_after_values() {
        // 2015-10-21 07:28:00 UTC
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let at = |v: &str| retry_after(v.as_bytes(), now);
        assert_eq!(at("2"), Some(Duration::from_secs(2)));
        assert_eq!(at(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(at("0"), Some(Duration::ZERO));
        assert_eq!(
            at("99999999999999999999999"),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            at("Wed, 21 Oct 2015 07:28:30 GMT"),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            at("Wed, 21 Oct 2015 07:00:00 GMT"),
            Some(Duration::ZERO),
            "past"
        );
        for bad in ["", "-1", "1.5", "soon", "2 s", "Wed, 21 Oct 2015"] {
            assert_eq!(at(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_server_wait_replaces_the_backoff_within_the_bounds() {
        let p = policy();
        let zero = Duration::ZERO;
        let asked = Some(Duration::from_millis(700));
        // Above `max_delay` (150 ms), exact, no jitter.
        for verdict in [Verdict::RateLimited, Verdict::MaybeApplied] {
            assert_eq!(
                p.delay(verdict, true, 1, zero, asked),
                Some(Duration::from_millis(700))
            );
        }
        // 429 is repeated whatever the operation; 503 only where a repeat is safe.
        assert!(
            p.delay(Verdict::RateLimited, false, 1, zero, asked)
                .is_some()
        );
        assert!(
            p.delay(Verdict::RateLimited, false, 1, zero, None)
                .is_some()
        );
        assert!(
            p.delay(Verdict::MaybeApplied, false, 1, zero, asked)
                .is_none()
        );
        // The attempts and the elapsed time still bound it.
        assert!(
            p.delay(Verdict::RateLimited, true, 3, zero, asked)
                .is_none()
        );
        assert!(
            p.delay(
                Verdict::RateLimited,
                true,
                1,
                Duration::from_millis(400),
                asked
            )
            .is_none(),
            "would end past max_elapsed"
        );
        // Capped at the documented maximum.
        let long = RetryPolicy::Backoff(Backoff {
            max_elapsed: Duration::from_secs(3600),
            ..Backoff::default()
        });
        assert_eq!(
            long.delay(
                Verdict::RateLimited,
                true,
                1,
                zero,
                Some(Duration::from_secs(3000))
            ),
            Some(MAX_RETRY_AFTER)
        );
        assert!(
            RetryPolicy::Never
                .delay(Verdict::RateLimited, true, 1, zero, asked)
                .is_none()
        );
    }
}
