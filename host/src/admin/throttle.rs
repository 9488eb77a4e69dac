//! Wrong admin tokens slowed down, per source address: each failure from an address puts
//! its next answer later (100 ms, doubling, at most 10 s apart), and answers to an
//! address's failed attempts leave one after the other, so parallel guesses queue as
//! serial ones do. An address is forgiven once a right token comes from it, or ten minutes
//! after its last failure. Trying 500 tokens from one address takes over an hour instead
//! of a fraction of a second; a person who mistypes once waits a tenth of a second.

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::Mutex,
    time::Duration,
};

use tokio::time::Instant;

use crate::server::NotBefore;

/// The first failure's delay; each further one doubles it.
pub(crate) const FIRST_DELAY: Duration = Duration::from_millis(100);
/// The longest delay between two answers to one address's failures.
pub(crate) const MAX_DELAY: Duration = Duration::from_secs(10);
/// How long an address's failures are remembered after its last one.
pub(crate) const FORGET_AFTER: Duration = Duration::from_secs(600);
/// Addresses remembered at once: past it the oldest is forgotten (a bound on memory).
const MAX_ADDRESSES: usize = 4096;

#[derive(Debug)]
struct Record {
    failures: u32,
    last: Instant,
    /// When the answer to the last failure leaves.
    free_at: Instant,
}

/// Failed attempts per source address.
#[derive(Debug, Default)]
pub struct Failures {
    by_address: Mutex<HashMap<IpAddr, Record>>,
}

impl Failures {
    /// Records a failure from `peer`: when its answer may leave.
    pub fn failed(&self, peer: Option<SocketAddr>) -> Option<NotBefore> {
        let ip = peer?.ip();
        let now = Instant::now();
        let mut map = self.by_address.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_ADDRESSES && !map.contains_key(&ip) {
            map.retain(|_, r| now.duration_since(r.last) < FORGET_AFTER);
            if map.len() >= MAX_ADDRESSES
                && let Some(oldest) = map.iter().min_by_key(|(_, r)| r.last).map(|(ip, _)| *ip)
            {
                map.remove(&oldest);
            }
        }
        let record = map.entry(ip).or_insert(Record {
            failures: 0,
            last: now,
            free_at: now,
        });
        if now.duration_since(record.last) >= FORGET_AFTER {
            record.failures = 0;
        }
        record.failures = record.failures.saturating_add(1);
        record.last = now;
        let delay = delay(record.failures);
        record.free_at = record.free_at.max(now) + delay;
        Some(NotBefore(record.free_at))
    }

    /// A right token from `peer`: its failures are forgotten.
    pub fn succeeded(&self, peer: Option<SocketAddr>) {
        if let Some(peer) = peer {
            self.by_address
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&peer.ip());
        }
    }
}

/// The delay after the `n`th failure (1-based).
pub(crate) fn delay(n: u32) -> Duration {
    let doubled =
        FIRST_DELAY.saturating_mul(1u32.checked_shl(n.saturating_sub(1)).unwrap_or(u32::MAX));
    doubled.min(MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_cap() {
        assert_eq!(delay(1), Duration::from_millis(100));
        assert_eq!(delay(2), Duration::from_millis(200));
        assert_eq!(delay(7), Duration::from_millis(6400));
        assert_eq!(delay(8), MAX_DELAY);
        assert_eq!(delay(1000), MAX_DELAY);
    }

    #[tokio::test(start_paused = true)]
    async fn answers_to_one_address_leave_one_after_the_other() {
        let failures = Failures::default();
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let b: SocketAddr = "127.0.0.2:1000".parse().unwrap();
        let start = Instant::now();
        let at = |n: Option<NotBefore>| n.unwrap().0.duration_since(start);
        // Three at once from one address: 100, 100 + 200, 300 + 400 ms.
        assert_eq!(at(failures.failed(Some(a))), Duration::from_millis(100));
        assert_eq!(at(failures.failed(Some(a))), Duration::from_millis(300));
        assert_eq!(at(failures.failed(Some(a))), Duration::from_millis(700));
        // Another address has its own count.
        assert_eq!(at(failures.failed(Some(b))), Duration::from_millis(100));
        // A right token forgives; ten quiet minutes do too.
        failures.succeeded(Some(a));
        assert_eq!(at(failures.failed(Some(a))), Duration::from_millis(100));
        tokio::time::advance(FORGET_AFTER).await;
        let later = failures
            .failed(Some(b))
            .unwrap()
            .0
            .duration_since(Instant::now());
        assert_eq!(later, Duration::from_millis(100));
        // No address, no record.
        assert!(failures.failed(None).is_none());
    }
}
