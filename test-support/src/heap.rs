//! The heap counter of the memory tests and benchmarks: a global allocator that counts the
//! bytes the process holds, and the most it has held over a stretch of code.
//!
//! ```text
//! #[global_allocator]
//! static ALLOCATOR: licensing_test_support::heap::Counting = licensing_test_support::heap::Counting;
//! ```

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicUsize, Ordering},
};

/// Counts the heap the process holds, and the most it has held since [`Heap::start`].
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is handed to the system allocator with the caller's own arguments, so
// the system allocator's guarantees are this one's; the counting beside it touches only
// atomics and never allocates.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: `layout` is the caller's, with the contract `GlobalAlloc::alloc` states.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: `p` came from `System` through this allocator, with this `layout`.
        unsafe { System.dealloc(p, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    /// The system's own `realloc` (a large block grows in place or is remapped, not
    /// copied), counted as the change in size.
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `p` came from `System` through this allocator, with this `layout`; the
        // caller guarantees `new_size` is valid for it.
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        q
    }
}

/// Heap growth over a stretch of code: `let h = Heap::start(); …; h.peak()`.
pub struct Heap {
    before: usize,
}

impl Heap {
    pub fn start() -> Self {
        let before = CURRENT.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        Self { before }
    }

    /// The most the heap held above its size at [`Heap::start`], in bytes.
    pub fn peak(&self) -> usize {
        PEAK.load(Ordering::Relaxed).saturating_sub(self.before)
    }
}

/// The bytes the process holds on the heap now.
pub fn held() -> usize {
    CURRENT.load(Ordering::Relaxed)
}
