//! The operations of both services, one file per operation or small group: each decodes
//! the generated request type from a [`Call`], applies the documents' rules to the
//! [`state`](crate::state) and returns its reply's `data` or a [`Failure`]. Nothing here
//! speaks HTTP; the protocol layer puts the result in the envelope and on the wire.
//!
//! [`Db`] holds the state and applies every change in order, recorded before it is
//! applied ([`durable`]).

mod call;
mod durable;
mod failure;
pub(crate) mod member;
pub(crate) mod order;
mod query;
mod reply;

use std::{
    ops::RangeInclusive,
    sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use licensing_sdk::operations::Operation;

pub(crate) use call::{Call, locate};
pub(crate) use durable::{Loaded, OpenOptions};
pub(crate) use failure::{Failure, InvalidPath, Service, malformed};
pub(crate) use licensing_host::is_secret;
pub(crate) use query::Query;
pub(crate) use reply::{Encoded, encode};

use crate::{
    state::{Allocator, State, clock::Time},
    store::Store,
};

/// The limits the operations apply where the documents leave them to the platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// Accepted password lengths (`50003` outside).
    pub password_length: RangeInclusive<usize>,
    /// Trial member accounts one enterprise may hold (`60009` beyond).
    pub trial_member_limit: usize,
    /// Records the whole state may hold, so that no client can grow it without bound:
    /// enterprises, employees and license orders.
    pub max_enterprises: usize,
    pub max_members: usize,
    pub max_orders: usize,
}

/// Enterprises the state holds at most unless configured otherwise.
pub const DEFAULT_MAX_ENTERPRISES: usize = 100_000;
/// Employees the state holds at most unless configured otherwise.
pub const DEFAULT_MAX_MEMBERS: usize = 1_000_000;
/// License orders the state holds at most unless configured otherwise.
pub const DEFAULT_MAX_ORDERS: usize = 1_000_000;

impl Settings {
    /// Refused when the state already holds `max` records of a kind and `adding` more
    /// would pass it: the cause names the bound and its flag.
    pub fn room(
        held: usize,
        adding: usize,
        max: usize,
        what: &str,
        flag: &str,
    ) -> Result<(), String> {
        if held.saturating_add(adding) > max {
            return Err(format!(
                "the simulator holds {held} {what}, and takes at most {max} ({flag})"
            ));
        }
        Ok(())
    }
}

/// The services' state and everything that changes it.
pub(crate) struct Db {
    pub config: Settings,
    state: RwLock<State>,
    allocator: Mutex<Allocator>,
    /// Every time the simulator writes comes from here.
    pub clock: Time,
    /// Orders the changes and, with a state file, records each before it is applied.
    store: Store,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// The state for reading. A handler that panicked cannot leave the state half-written
    /// in a way that matters more than losing the simulator, so poisoning is ignored.
    pub fn state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state for writing.
    pub fn state_mut(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The asset-number allocator.
    pub fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A handler run for its effect alone (replaying a logged call).
type Replay = fn(&Db, &Call) -> Result<(), Failure>;

/// One operation of the generated table with what runs it: the reply it answers with,
/// as an envelope, for a call or for a failure found before the call ran.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    pub op: &'static Operation,
    /// Runs the handler as [`Db::run`] orders it.
    pub run: fn(&Db, &Call) -> Encoded,
    /// The envelope of a failure found by the checks every operation shares.
    pub fail: fn(&'static Operation, Failure) -> Encoded,
    /// Runs the handler on a call read back from the state file's log.
    replay: Replay,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.op.id)
    }
}

macro_rules! table {
    ($( ($service:ident, $builder:ident, $handler:ident, $method:ident, $path:literal,
         $reply:path, $op:path); )*) => {
        /// Every operation of both services, in the spec's order. An operation added to a
        /// spec without a handler here fails to compile.
        pub(crate) fn table() -> Vec<Entry> {
            vec![$(
                Entry {
                    op: &$op,
                    run: |db, call| encode::<$reply>(&$op, db.run(&$op, call, $service::$handler)),
                    fail: |op, failure| encode::<$reply>(op, Err(failure)),
                    replay: |db, call| $service::$handler(db, call).map(|_| ()),
                },
            )*]
        }
    };
}

licensing_sdk::for_each_operation!(table);

/// The handler of operation `id`, to replay a logged call with; `None` for an operation
/// this simulator does not have.
fn replayer(id: &str) -> Option<Replay> {
    table()
        .into_iter()
        .find(|entry| entry.op.id == id)
        .map(|entry| entry.replay)
}
