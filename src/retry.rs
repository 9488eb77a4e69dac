//! When a failed attempt is repeated.
//!
//! | what happened | repeated? |
//! |---|---|
//! | connect failure: the request never reached the server | yes, every operation |
//! | the server answered code `500` ("network exception, retry") | yes, every operation |
//! | timeout, reset or dropped reply after the request was sent | only operations marked `x-idempotent: true` in the spec |
//! | HTTP 500, 502, 503 or 504 (a server or gateway error outside the platform's envelope: the request may have been applied) | only operations marked `x-idempotent: true` |
//! | any other business error, validation error, undocumented status, undecodable reply | never |
//! | a rejected TLS certificate, a redirect, a reply over `max_reply_bytes` | never |
//!
//! A deadline ([`crate::ClientBuilder::deadline`], [`crate::CallOptions::deadline`]) bounds
//! all attempts and waits together: a wait that would end past it is not started.
//!
//! Each attempt is a new request with a new `g_nonce`. Between attempts the client waits a
//! random delay between zero and `initial_delay × 2^(attempt−1)` (capped at `max_delay`:
//! "full jitter"), and stops after `max_attempts` attempts or once the next wait would pass
//! `max_elapsed` since the first attempt.

use std::time::Duration;

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
    /// The request may have been applied (timeout or lost reply).
    MaybeApplied,
}

impl RetryPolicy {
    /// The wait before the next attempt, or `None` to stop.
    pub(crate) fn delay(
        &self,
        verdict: Verdict,
        idempotent: bool,
        attempt: u32,
        elapsed: Duration,
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
        let ceiling = b
            .initial_delay
            .saturating_mul(1u32 << (attempt - 1).min(20))
            .min(b.max_delay);
        let delay = ceiling.mul_f64(unit_random());
        (elapsed + delay <= b.max_elapsed).then_some(delay)
    }
}

/// Uniform in [0, 1]; jitter needs no cryptographic strength, but the OS source is at hand.
fn unit_random() -> f64 {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
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
        assert!(p.delay(Verdict::Final, true, 1, zero).is_none());
        assert!(p.delay(Verdict::NotSent, false, 1, zero).is_some());
        assert!(p.delay(Verdict::RetryRequested, false, 1, zero).is_some());
        assert!(p.delay(Verdict::MaybeApplied, false, 1, zero).is_none());
        assert!(p.delay(Verdict::MaybeApplied, true, 1, zero).is_some());
        assert!(
            RetryPolicy::Never
                .delay(Verdict::NotSent, true, 1, zero)
                .is_none()
        );
    }

    #[test]
    fn bounds() {
        let p = policy();
        assert!(
            p.delay(Verdict::NotSent, true, 3, Duration::ZERO).is_none(),
            "max_attempts"
        );
        assert!(
            p.delay(Verdict::NotSent, true, 1, Duration::from_secs(2))
                .is_none(),
            "max_elapsed"
        );
        for attempt in 1..3 {
            for _ in 0..200 {
                let d = p
                    .delay(Verdict::NotSent, true, attempt, Duration::ZERO)
                    .unwrap();
                let cap = Duration::from_millis(if attempt == 1 { 100 } else { 150 });
                assert!(d <= cap, "attempt {attempt}: {d:?} > {cap:?}");
            }
        }
    }
}
