//! The simulator's clock: the source of every time the simulator writes (creation and
//! update times of employees, assets, orders, assignments).
//!
//! It runs as wall time plus an offset, or stands frozen at an instant. A test sets or
//! advances it to see what a day or a year later looks like, or freezes it to get exact
//! times in replies.

use std::{
    sync::{Mutex, MutexGuard, PoisonError},
    time::{SystemTime, UNIX_EPOCH},
};

use serde::{Deserialize, Serialize};

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
    /// Reads `ms` now: a running clock keeps running from there, a frozen one stays.
    pub fn set(self, ms: i64) -> Self {
        self.reading_at(ms, wall_ms())
    }

    /// `ms` milliseconds later (earlier when negative), running or frozen as it was.
    pub fn advance(self, ms: i64) -> Self {
        let wall = wall_ms();
        self.reading_at(self.reading(wall).saturating_add(ms), wall)
    }

    /// Stopped at its current reading.
    pub fn freeze(self) -> Self {
        Setting::Frozen {
            at_ms: self.reading(wall_ms()),
        }
    }

    /// Running again from the instant it stood at.
    pub fn unfreeze(self) -> Self {
        let wall = wall_ms();
        Setting::Running {
            offset_ms: self.reading(wall).saturating_sub(wall),
        }
    }

    /// Whether it stands still.
    pub fn is_frozen(self) -> bool {
        matches!(self, Setting::Frozen { .. })
    }

    pub fn reading(self, wall: i64) -> i64 {
        match self {
            Setting::Running { offset_ms } => wall.saturating_add(offset_ms),
            Setting::Frozen { at_ms } => at_ms,
        }
    }

    /// The setting that reads `ms` now, in the same mode.
    pub fn reading_at(self, ms: i64, wall: i64) -> Self {
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

/// The time every record is written with. Changes to its setting are made by the layer
/// that orders and records the state's changes ([`Setting`]'s methods say what each does).
#[derive(Debug, Default)]
pub(crate) struct Time {
    inner: Mutex<Inner>,
}

impl Time {
    pub fn new(setting: Setting) -> Self {
        Self {
            inner: Mutex::new(Inner {
                setting,
                pinned: None,
            }),
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

    pub fn setting(&self) -> Setting {
        self.lock().setting
    }

    /// Replaces the setting (the caller has made the change durable).
    pub fn restore(&self, setting: Setting) {
        self.lock().setting = setting;
    }

    /// Makes every reading `ms` until the guard is dropped: the instant of the mutating
    /// call being applied or replayed. Callers hold the store for writing, so no two calls
    /// pin at once.
    pub fn pin(&self, ms: i64) -> Pin<'_> {
        self.lock().pinned = Some(ms);
        Pin(self)
    }
}

/// Unpins the clock when dropped, also when the handler panicked.
pub(crate) struct Pin<'c>(&'c Time);

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
        let clock = Time::new(Setting::default());
        let change = |f: &dyn Fn(Setting) -> Setting| clock.restore(f(clock.setting()));
        change(&Setting::freeze);
        change(&|s| s.set(1_000));
        assert_eq!(clock.now_ms(), 1_000);
        change(&|s| s.advance(500));
        assert_eq!(clock.now_ms(), 1_500);
        change(&|s| s.advance(-2_000));
        assert_eq!(clock.now_ms(), -500);
        assert!(clock.setting().is_frozen());
        {
            let _pin = clock.pin(7);
            assert_eq!(clock.now_ms(), 7);
        }
        assert_eq!(clock.now_ms(), -500);
    }

    #[test]
    fn running_clock_keeps_its_offset() {
        let clock = Time::new(Setting::default());
        let change = |f: &dyn Fn(Setting) -> Setting| clock.restore(f(clock.setting()));
        let year = 365 * 24 * 3600 * 1000;
        change(&|s| s.advance(year));
        let ahead = clock.now_ms() - wall_ms();
        assert!((year - 1_000..=year + 1_000).contains(&ahead), "{ahead}");
        change(&|s| s.set(5_000));
        assert!((5_000..6_000).contains(&clock.now_ms()));
        change(&Setting::freeze);
        let at = clock.now_ms();
        change(&Setting::unfreeze);
        assert!(!clock.setting().is_frozen());
        assert!(clock.now_ms() - at < 1_000);
        change(&|_| Setting::default());
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
