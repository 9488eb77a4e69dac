//! The simulator's clock: the source of every time the simulator writes (creation and
//! update times of employees, assets, orders, assignments).
//!
//! It runs as wall time plus an offset, or stands frozen at an instant. A test sets or
//! advances it to see what a day or a year later looks like, or freezes it to get exact
//! times in replies.

use std::{
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::{SystemTime, UNIX_EPOCH},
};

use serde::{Deserialize, Serialize};

use super::persist::Store;

/// Milliseconds since the Unix epoch by the machine's clock: the unit the simulator uses
/// for every `long` time field (the documents do not say).
pub(crate) fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// How the clock reads: what an export and the state file keep of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub(crate) enum Setting {
    /// Wall time plus `offset_ms`.
    #[serde(rename_all = "camelCase")]
    Running { offset_ms: i64 },
    /// Stands at `at_ms` until set, advanced or unfrozen.
    #[serde(rename_all = "camelCase")]
    Frozen { at_ms: i64 },
}

impl Default for Setting {
    fn default() -> Self {
        Setting::Running { offset_ms: 0 }
    }
}

impl Setting {
    fn reading(self, wall: i64) -> i64 {
        match self {
            Setting::Running { offset_ms } => wall.saturating_add(offset_ms),
            Setting::Frozen { at_ms } => at_ms,
        }
    }

    /// The setting that reads `ms` now, in the same mode.
    fn reading_at(self, ms: i64, wall: i64) -> Self {
        match self {
            Setting::Running { .. } => Setting::Running {
                offset_ms: ms.saturating_sub(wall),
            },
            Setting::Frozen { .. } => Setting::Frozen { at_ms: ms },
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    setting: Setting,
    /// The reading of the mutating call being applied: every time it writes is this one.
    pinned: Option<i64>,
}

/// The simulator's clock, from [`Simulator::clock`](crate::Simulator::clock): every
/// time the simulator writes (an employee's or asset's creation and update time, an
/// assignment time) is read from it, in milliseconds since the Unix epoch.
///
/// It starts as the machine's clock. [`set`](Clock::set) and [`advance`](Clock::advance)
/// move it, keeping it running (wall time plus an offset) or frozen;
/// [`freeze`](Clock::freeze) stops it at its current reading until it is set, advanced
/// or [unfrozen](Clock::unfreeze); [`reset`](Clock::reset) makes it the machine's clock
/// again. Each request reads it once, so all the times one request writes are equal.
/// With a state file ([`SimulatorBuilder::state_file`](crate::SimulatorBuilder::state_file))
/// every change is durable, like a mutating request.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// let sim = licensing_sim::Simulator::start().await?;
/// sim.clock().freeze();
/// sim.clock().set(1_700_000_000_000);
/// sim.clock().advance(24 * 60 * 60 * 1000); // a day later, still frozen
/// assert_eq!(sim.clock().now_ms(), 1_700_086_400_000);
/// # Ok(()) }
/// ```
pub struct Clock {
    inner: Mutex<Inner>,
    /// Orders changes with the mutating calls and makes them durable.
    store: Arc<Store>,
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clock")
            .field("setting", &self.lock().setting)
            .finish_non_exhaustive()
    }
}

impl Clock {
    pub(crate) fn new(setting: Setting, store: Arc<Store>) -> Self {
        Self {
            inner: Mutex::new(Inner {
                setting,
                pinned: None,
            }),
            store,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current reading, in milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        let inner = self.lock();
        inner
            .pinned
            .unwrap_or_else(|| inner.setting.reading(wall_ms()))
    }

    /// Sets the clock to read `ms` (milliseconds since the Unix epoch) now. A running
    /// clock keeps running from there; a frozen one stays at `ms`.
    pub fn set(&self, ms: i64) {
        self.change(|s| s.reading_at(ms, wall_ms()));
    }

    /// Moves the clock `ms` milliseconds forward (backward when negative), running or
    /// frozen as it was.
    pub fn advance(&self, ms: i64) {
        self.change(|s| {
            let wall = wall_ms();
            s.reading_at(s.reading(wall).saturating_add(ms), wall)
        });
    }

    /// Stops the clock at its current reading; [`set`](Clock::set) and
    /// [`advance`](Clock::advance) still move it. Freezing a frozen clock changes nothing.
    pub fn freeze(&self) {
        self.change(|s| Setting::Frozen {
            at_ms: s.reading(wall_ms()),
        });
    }

    /// Lets a frozen clock run again from the instant it stood at.
    pub fn unfreeze(&self) {
        self.change(|s| {
            let wall = wall_ms();
            Setting::Running {
                offset_ms: s.reading(wall).saturating_sub(wall),
            }
        });
    }

    /// Whether the clock is frozen.
    pub fn is_frozen(&self) -> bool {
        matches!(self.lock().setting, Setting::Frozen { .. })
    }

    /// Makes it the machine's clock again: running, no offset.
    pub fn reset(&self) {
        self.change(|_| Setting::default());
    }

    fn change(&self, to: impl Fn(Setting) -> Setting) {
        let mut log = self.store.write();
        let setting = {
            let mut inner = self.lock();
            inner.setting = to(inner.setting);
            inner.setting
        };
        Store::clock_changed(&mut log, setting);
    }

    pub(crate) fn setting(&self) -> Setting {
        self.lock().setting
    }

    /// Replaces the setting (loading, importing, resetting: the caller makes the whole
    /// state durable).
    pub(crate) fn restore(&self, setting: Setting) {
        self.lock().setting = setting;
    }

    /// Makes every reading `ms` until the guard is dropped: the instant of the mutating
    /// call being applied or replayed. Callers hold the store for writing, so no two calls
    /// pin at once.
    pub(crate) fn pin(&self, ms: i64) -> Pin<'_> {
        self.lock().pinned = Some(ms);
        Pin(self)
    }
}

/// Unpins the clock when dropped, also when the handler panicked.
pub(crate) struct Pin<'c>(&'c Clock);

impl Drop for Pin<'_> {
    fn drop(&mut self) {
        self.0.lock().pinned = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frozen_clock_moves_only_when_told() {
        let clock = Clock::new(Setting::default(), Arc::default());
        clock.freeze();
        clock.set(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        clock.advance(500);
        assert_eq!(clock.now_ms(), 1_500);
        clock.advance(-2_000);
        assert_eq!(clock.now_ms(), -500);
        assert!(clock.is_frozen());
        {
            let _pin = clock.pin(7);
            assert_eq!(clock.now_ms(), 7);
        }
        assert_eq!(clock.now_ms(), -500);
    }

    #[test]
    fn running_clock_keeps_its_offset() {
        let clock = Clock::new(Setting::default(), Arc::default());
        let year = 365 * 24 * 3600 * 1000;
        clock.advance(year);
        let ahead = clock.now_ms() - wall_ms();
        assert!((year - 1_000..=year + 1_000).contains(&ahead), "{ahead}");
        clock.set(5_000);
        assert!((5_000..6_000).contains(&clock.now_ms()));
        clock.freeze();
        let at = clock.now_ms();
        clock.unfreeze();
        assert!(!clock.is_frozen());
        assert!(clock.now_ms() - at < 1_000);
        clock.reset();
        assert!((clock.now_ms() - wall_ms()).abs() < 1_000);
    }

    #[test]
    fn setting_serialises_by_mode() {
        let frozen = serde_json::to_value(Setting::Frozen { at_ms: 5 }).unwrap();
        assert_eq!(frozen, serde_json::json!({"mode": "frozen", "atMs": 5}));
        let running: Setting =
            serde_json::from_value(serde_json::json!({"mode": "running", "offsetMs": -3})).unwrap();
        assert_eq!(running, Setting::Running { offset_ms: -3 });
    }
}
