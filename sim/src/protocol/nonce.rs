//! `g_nonce`: replay protection, bounded in time and in count.

use std::{
    collections::{HashSet, VecDeque},
    hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState},
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

use licensing_sdk::{ErrorCode, operations::Operation};

use crate::ops::{Failure, Query, Service, malformed};

/// A missing, empty or repeated `g_nonce` is a malformed request ([`malformed`]); a
/// replayed one is refused with `13004` by the order service and as a failed security
/// check (`70001`) by the member center. A request carrying two `g_nonce`s is refused
/// whatever their values (a fresh one cannot launder a used one), and neither is recorded.
pub(crate) fn check_nonce(
    nonces: &Mutex<NonceWindow>,
    op: &Operation,
    query: &Query,
) -> Result<(), Failure> {
    let mut given = query
        .pairs()
        .filter(|(k, _)| *k == "g_nonce")
        .map(|(_, v)| v);
    let (first, second) = (given.next(), given.next());
    if second.is_some() {
        let given = 2 + given.count();
        return Err(malformed(
            op,
            format!("g_nonce must be given exactly once (given {given} times)"),
        ));
    }
    let Some(nonce) = first.filter(|v| !v.is_empty()) else {
        return Err(malformed(op, "g_nonce is required"));
    };
    let fresh = nonces
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .admit(nonce, Instant::now());
    if fresh {
        return Ok(());
    }
    let cause = "g_nonce has already been used (replayed request)";
    Err(match Service::from(op.service) {
        Service::Order => Service::Order.invalid(cause),
        Service::Member => Failure::with_message(
            ErrorCode::SecurityCheckFailed,
            format!("security check failed: {cause}"),
            cause,
        ),
    })
}

/// The `g_nonce`s seen recently: bounded both in time and in count, so memory stays
/// bounded however many requests arrive. Only a keyed 64-bit hash of each nonce is kept,
/// so a long nonce costs no more than a short one.
#[derive(Debug)]
pub(crate) struct NonceWindow {
    hasher: RandomState,
    /// Keyed hashes already: the set uses them as they are instead of hashing them again.
    seen: HashSet<u64, BuildHasherDefault<Prehashed>>,
    order: VecDeque<(Instant, u64)>,
    window: Duration,
    capacity: usize,
}

impl NonceWindow {
    pub fn new(window: Duration, capacity: usize) -> Self {
        Self {
            hasher: RandomState::new(),
            seen: HashSet::default(),
            order: VecDeque::new(),
            window,
            capacity: capacity.max(1),
        }
    }

    /// Records the nonce; `false` if it was seen within the window.
    pub fn admit(&mut self, nonce: &str, now: Instant) -> bool {
        while let Some(&(at, hash)) = self.order.front() {
            if now.duration_since(at) < self.window && self.order.len() < self.capacity {
                break;
            }
            self.order.pop_front();
            self.seen.remove(&hash);
        }
        let hash = self.hasher.hash_one(nonce);
        if !self.seen.insert(hash) {
            return false;
        }
        self.order.push_back((now, hash));
        true
    }
}

/// The hasher of [`NonceWindow::seen`]: its keys are the output of a keyed hash.
#[derive(Debug, Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed here (`write_u64`); anything else is folded in.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_window_rejects_replays_and_forgets() {
        let mut window = NonceWindow::new(Duration::from_secs(10), 3);
        let t0 = Instant::now();
        assert!(window.admit("a", t0));
        assert!(!window.admit("a", t0));
        assert!(window.admit("b", t0));
        assert!(window.admit("c", t0));
        // Capacity 3: admitting "d" forgets "a", the oldest.
        assert!(window.admit("d", t0));
        assert!(window.admit("a", t0));
        // After the window everything is forgotten.
        let later = t0 + Duration::from_secs(11);
        assert!(window.admit("d", later));
        assert!(window.order.len() <= 3);
    }
}
