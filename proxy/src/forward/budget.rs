//! The check budget: bytes of bodies held to be checked at once, across every exchange. A
//! check reads its body as it is parsed and holds little besides (see `check::walk`), but
//! the bodies themselves may be up to the reply cap each, and as many as there are
//! connections. A request body (already read by the accept loop, within its own body
//! budget) that does not fit is forwarded unchecked; an upstream reply takes its room as it
//! is read, and one that does not fit is handed on as it arrives, unchecked and never held
//! whole. Either way one `not-checked` deviation says so, rather than the proxy running out
//! of memory.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

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

/// A body's room in the budget, given back when dropped (owned, so that a reply handed on
/// as it arrives keeps the room of what was read of it until that is sent).
#[derive(Debug)]
pub(crate) struct Held {
    budget: Arc<CheckBudget>,
    bytes: usize,
}

impl Held {
    /// Room for `bytes` more of the same body, or the bytes other bodies hold when there
    /// is none (the room held so far is kept until dropped).
    pub fn grow(&mut self, bytes: usize) -> Result<(), usize> {
        let more = self.budget.reserve(bytes)?;
        self.bytes += more.bytes;
        // Its bytes are this one's now: given back when this is dropped, not twice.
        std::mem::forget(more);
        Ok(())
    }
}

impl Drop for Held {
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
    pub fn reserve(self: &Arc<Self>, bytes: usize) -> Result<Held, usize> {
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
                        budget: Arc::clone(self),
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
        let budget = Arc::new(CheckBudget::new(100));
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

    #[test]
    fn a_body_read_in_pieces_grows_its_room() {
        let budget = Arc::new(CheckBudget::new(100));
        let mut a = budget.reserve(0).unwrap();
        a.grow(40).unwrap();
        a.grow(40).unwrap();
        assert_eq!(a.grow(30).unwrap_err(), 80, "what it holds itself counts");
        let b = budget.reserve(20).unwrap();
        drop(a);
        assert_eq!(budget.reserve(81).unwrap_err(), 20, "all 80 given back");
        drop(b);
        assert!(budget.reserve(100).is_ok());
    }
}
