//! The simulator's clock as the sandbox drives it.

use std::sync::Arc;

use crate::{ops::Db, state::clock::Setting};

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
/// every change is recorded before it takes effect, like a mutating request; a change
/// that cannot be recorded does not take effect (and is logged at error level).
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
    db: Arc<Db>,
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clock")
            .field("setting", &self.db.clock.setting())
            .finish_non_exhaustive()
    }
}

impl Clock {
    pub(crate) fn new(db: Arc<Db>) -> Self {
        Self { db }
    }

    fn change(&self, to: impl Fn(Setting) -> Setting) {
        if let Err(e) = self.db.change_clock(to) {
            tracing::error!(error = %e, "the clock change cannot be recorded: not applied");
        }
    }

    /// The current reading, in milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.db.clock.now_ms()
    }

    /// Sets the clock to read `ms` (milliseconds since the Unix epoch) now. A running
    /// clock keeps running from there; a frozen one stays at `ms`.
    pub fn set(&self, ms: i64) {
        self.change(|s| s.set(ms));
    }

    /// Moves the clock `ms` milliseconds forward (backward when negative), running or
    /// frozen as it was.
    pub fn advance(&self, ms: i64) {
        self.change(|s| s.advance(ms));
    }

    /// Stops the clock at its current reading; [`set`](Clock::set) and
    /// [`advance`](Clock::advance) still move it. Freezing a frozen clock changes nothing.
    pub fn freeze(&self) {
        self.change(Setting::freeze);
    }

    /// Lets a frozen clock run again from the instant it stood at.
    pub fn unfreeze(&self) {
        self.change(Setting::unfreeze);
    }

    /// Whether the clock is frozen.
    pub fn is_frozen(&self) -> bool {
        self.db.clock.setting().is_frozen()
    }

    /// Makes it the machine's clock again: running, no offset.
    pub fn reset(&self) {
        self.change(|_| Setting::default());
    }
}
