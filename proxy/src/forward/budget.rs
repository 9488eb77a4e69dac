//! The check budget: bytes of bodies being checked at once, across every exchange. A
//! check reads its body as it is parsed and holds little besides (see `check::walk`), but
//! the bodies themselves may be up to the reply cap each, and as many as there are
//! connections; a body that does not fit in what the others leave is forwarded unchecked,
//! with one `not-checked` deviation, rather than the proxy running out of memory.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of bodies checked at once unless configured otherwise: 256 MiB.
pub const DEFAULT_CHECK_BUDGET: usize = 256 * 1024 * 1024;

/// Bytes of bodies under check, and the bound.
#[derive(Debug)]
pub(crate) struct CheckBudget {
    limit: usize,
    held: AtomicUsize,
    /// Bodies forwarded unchecked for want of room.
    refused: AtomicUsize,
}

/// A body's room in the budget, given back when dropped.
#[derive(Debug)]
pub(crate) struct Held<'a> {
    budget: &'a CheckBudget,
    bytes: usize,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl CheckBudget {
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            held: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        }
    }

    /// The bound, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bodies forwarded unchecked so far.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::Relaxed)
    }

    /// Room for a body of `bytes`, or the bytes other bodies hold when there is none. A
    /// body larger than the whole budget never fits.
    pub fn reserve(&self, bytes: usize) -> Result<Held<'_>, usize> {
        let mut held = self.held.load(Ordering::Acquire);
        loop {
            if held.saturating_add(bytes) > self.limit {
                self.refused.fetch_add(1, Ordering::Relaxed);
                return Err(held);
            }
            match self.held.compare_exchange_weak(
                held,
                held + bytes,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    return Ok(Held {
                        budget: self,
                        bytes,
                    });
                }
                Err(now) => held = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_given_back() {
        let budget = CheckBudget::new(100);
        let a = budget.reserve(60).unwrap();
        assert_eq!(budget.reserve(50).unwrap_err(), 60);
        let b = budget.reserve(40).unwrap();
        drop(a);
        assert!(budget.reserve(60).is_ok());
        drop(b);
        assert_eq!(
            budget.reserve(101).unwrap_err(),
            0,
            "larger than the budget"
        );
        assert_eq!(budget.refused(), 2);
        assert!(budget.reserve(100).is_ok());
    }
}
