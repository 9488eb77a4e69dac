//! Every change in order, each recorded before it is applied.
//!
//! A mutating call holds the store for writing: its record (the operation, the clock
//! reading, the decoded request without credentials) is appended to the log and synced,
//! then the handler runs, then the reply goes out. When the record cannot be written
//! nothing of the call is applied and it answers `500` ("network exception, retry"),
//! which the SDK retries; the retry is then the only time it is applied. Reads hold the
//! store for reading, so that no reply shows a change that is not durable.
//!
//! Starting replays the log over the snapshot through the same handlers, each with the
//! clock reading and the limits it ran with, then writes a new snapshot and an empty log
//! (compaction); so does a log grown past its limit.

use std::{collections::BTreeMap, io, path::Path};

use bytes::Bytes;
use licensing_sdk::{
    ErrorCode,
    operations::{Method, Operation},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Call, Db, Failure, Settings, is_secret, replayer};
use crate::{
    state::{
        Allocator, Region, State,
        clock::{Setting, Time},
        document::{
            DocumentRef, ImportError, VERSION, read_document, read_snapshot, snapshot_seq,
            write_snapshot,
        },
    },
    store::{self, Log, StateFileError, Store, WriteFaults},
};

/// A checked state, ready to replace the running one.
pub(crate) use crate::state::document::Loaded;

/// How to open a state file.
#[derive(Clone, Debug, Default)]
pub(crate) struct OpenOptions {
    /// The region to allocate in from now on (`None`: the file's).
    pub region: Option<Region>,
    /// The size the log may reach before it is compacted.
    pub log_limit: u64,
    /// Keep what is whole of a damaged log instead of refusing to start.
    pub recover: bool,
    pub faults: WriteFaults,
}

/// One change, as the log keeps it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
enum Entry {
    /// A mutating call, recorded before its handler ran. Its body follows the record's
    /// JSON line.
    #[serde(rename_all = "camelCase")]
    Call {
        seq: u64,
        op: String,
        /// The clock reading every time it writes.
        now: i64,
        path: BTreeMap<String, String>,
        /// The query's parameters but `g_nonce`; a credential's value is replaced by a
        /// placeholder (empty stays empty), so the handler sees what it saw then.
        query: Vec<(String, String)>,
        content_type: Option<String>,
        /// Why the body could not be read (it is then absent).
        body_error: Option<String>,
    },
    Clock {
        seq: u64,
        clock: Setting,
    },
    Region {
        seq: u64,
        region: Region,
    },
    ResetEnterprise {
        seq: u64,
        enterprise: String,
    },
}

impl Entry {
    fn seq(&self) -> u64 {
        match self {
            Entry::Call { seq, .. }
            | Entry::Clock { seq, .. }
            | Entry::Region { seq, .. }
            | Entry::ResetEnterprise { seq, .. } => *seq,
        }
    }
}

/// What stands for a credential in the log.
const PLACEHOLDER: &str = "[REDACTED]";

/// The query as the log keeps it: no `g_nonce` (the gate checked it; replay does not),
/// and no credential's value.
fn recorded_query(call: &Call) -> Vec<(String, String)> {
    call.query_pairs()
        .filter(|(k, _)| *k != "g_nonce")
        .map(|(k, v)| {
            let v = if is_secret(k) && !v.trim().is_empty() {
                PLACEHOLDER
            } else {
                v
            };
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

/// What a change answers when it cannot be recorded: the documented "network exception,
/// retry" of every operation. Nothing of it was applied.
pub(crate) fn not_durable() -> Failure {
    Failure::new(
        ErrorCode::NetworkException,
        "the simulator cannot write its state file (see its log); nothing was applied",
    )
}

fn settings_json(settings: &Settings) -> Value {
    serde_json::json!({
        "passwordLength": [settings.password_length.start(), settings.password_length.end()],
        "trialMemberLimit": settings.trial_member_limit,
        "maxEnterprises": settings.max_enterprises,
        "maxMembers": settings.max_members,
        "maxOrders": settings.max_orders,
    })
}

fn settings_of(json: &Value) -> Option<Settings> {
    let count = |name: &str, default: usize| {
        json.get(name)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(default)
    };
    let [min, max] = json.get("passwordLength")?.as_array()?.as_slice() else {
        return None;
    };
    Some(Settings {
        password_length: usize::try_from(min.as_u64()?).ok()?
            ..=usize::try_from(max.as_u64()?).ok()?,
        trial_member_limit: usize::try_from(json.get("trialMemberLimit")?.as_u64()?).ok()?,
        max_enterprises: count("maxEnterprises", super::DEFAULT_MAX_ENTERPRISES),
        max_members: count("maxMembers", super::DEFAULT_MAX_MEMBERS),
        max_orders: count("maxOrders", super::DEFAULT_MAX_ORDERS),
    })
}

impl Db {
    fn with(config: Settings, loaded: Loaded, log: Option<Log>) -> Self {
        Self {
            config,
            state: loaded.state.into(),
            allocator: loaded.allocator.into(),
            clock: Time::new(loaded.clock),
            store: Store::new(log),
        }
    }

    /// A state in memory only.
    pub fn in_memory(config: Settings, loaded: Loaded) -> Self {
        Self::with(config, loaded, None)
    }

    /// Opens the state file at `path`: loads the snapshot, replays the log over it,
    /// applies the region when given, and compacts (a new snapshot and an empty log),
    /// before any request is served. Nothing is written unless all of that succeeded.
    pub fn open(
        path: &Path,
        config: Settings,
        options: OpenOptions,
    ) -> Result<Self, StateFileError> {
        let opened = store::open(path, options.recover, snapshot_seq)?;
        let (mut loaded, snapshot_seq) = match &opened.snapshot {
            None => (Loaded::fresh(Region::default()), 0),
            Some(bytes) => {
                let (loaded, seq) = read_snapshot(bytes).map_err(|e| {
                    let at = if e.path.is_empty() {
                        String::new()
                    } else {
                        format!("{}: ", e.path)
                    };
                    StateFileError::new(path, format!("not a usable state: {at}{}", e.message))
                })?;
                (loaded, seq.unwrap_or(0))
            }
        };
        let logged = opened
            .settings
            .as_ref()
            .map(|json| {
                settings_of(json).ok_or_else(|| {
                    StateFileError::new(opened.log_path(), "the log's header has no settings")
                })
            })
            .transpose()?
            .unwrap_or_else(|| config.clone());
        let mut seq = opened.after;
        if !opened.records.is_empty() {
            let db = Self::in_memory(logged, loaded);
            for (n, (offset, payload)) in opened.records.iter().enumerate() {
                let at = format!("record {} at byte {offset}", n + 2);
                let fail = |e: String| StateFileError::new(opened.log_path(), format!("{at}: {e}"));
                let (entry, body) = entry(payload).map_err(fail)?;
                if entry.seq() != seq + 1 {
                    return Err(fail(format!(
                        "change {} where {} was expected",
                        entry.seq(),
                        seq + 1
                    )));
                }
                seq += 1;
                if seq <= snapshot_seq {
                    continue;
                }
                db.apply(entry, body).map_err(fail)?;
            }
            loaded = db.into_loaded();
        }
        let seq = seq.max(snapshot_seq);
        if let Some(region) = options.region {
            loaded.allocator.set_region(region);
        }
        let log = Log::start(
            opened,
            |out| write_snapshot(out, seq, loaded.clock, &loaded.allocator, &loaded.state),
            seq,
            settings_json(&config),
            options.log_limit,
            options.faults,
        )?;
        Ok(Self::with(config, loaded, Some(log)))
    }

    /// The state it holds, to move elsewhere.
    fn into_loaded(self) -> Loaded {
        let clock = self.clock.setting();
        Loaded {
            clock,
            state: self
                .state
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            allocator: self
                .allocator
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }

    /// Applies one logged change to the state being rebuilt.
    fn apply(&self, entry: Entry, body: Bytes) -> Result<(), String> {
        match entry {
            Entry::Call {
                op,
                now,
                path,
                query,
                content_type,
                body_error,
                ..
            } => {
                let body = match body_error {
                    Some(error) => Err(error),
                    None => Ok(body),
                };
                let call = Call::recorded(
                    path.into_iter().collect(),
                    &query,
                    content_type.as_deref(),
                    body,
                );
                let handler = replayer(&op)
                    .ok_or_else(|| format!("no operation {op:?} in this simulator"))?;
                let _pin = self.clock.pin(now);
                // Refused calls were recorded too (they were recorded before they ran);
                // replayed, they are refused again and change nothing.
                let _ = handler(self, &call);
            }
            Entry::Clock { clock, .. } => self.clock.restore(clock),
            Entry::Region { region, .. } => self.allocator().set_region(region),
            Entry::ResetEnterprise { enterprise, .. } => {
                self.state_mut().remove_enterprise(&enterprise);
            }
        }
        Ok(())
    }

    /// Runs an operation's handler. A read runs beside other reads; a mutating call
    /// (every method but GET) runs alone, with one clock reading for every time it
    /// writes, and with a state file is recorded before it runs: whatever it answers,
    /// since a partial failure changes state too.
    pub fn run<T>(
        &self,
        op: &Operation,
        call: &Call,
        handler: fn(&Db, &Call) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        if op.method == Method::Get {
            let result = {
                let _reading = self.store.read();
                handler(self, call)
            };
            return named(call, result);
        }
        let mut guard = self.store.write();
        let now = self.clock.now_ms();
        if let Some(log) = guard.as_mut() {
            let body = call.raw_body();
            let entry = Entry::Call {
                seq: log.next_seq(),
                op: op.id.to_string(),
                now,
                path: call
                    .path_params()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                query: recorded_query(call),
                content_type: call.content_type().map(str::to_owned),
                body_error: body.err().map(str::to_owned),
            };
            let body = body.map_or(&[][..], |b| &b[..]);
            if let Err(e) = append(log, &entry, body) {
                tracing::error!(operation = op.id, error = %e, "cannot record a change: refused, nothing applied");
                return Err(not_durable());
            }
        }
        let result = {
            let _pin = self.clock.pin(now);
            handler(self, call)
        };
        if let Some(log) = guard.as_mut() {
            self.compact_if_grown(log);
        }
        drop(guard);
        named(call, result)
    }

    /// A log grown past its limit is folded into a new snapshot; failing that, the log
    /// still holds every change, and compaction is tried after the next one.
    fn compact_if_grown(&self, log: &mut Log) {
        if log.wants_compaction()
            && let Err(e) = self.compact(log)
        {
            tracing::warn!(error = %e, "cannot compact the state file's log");
        }
    }

    /// Writes the current state as the snapshot and starts an empty log.
    fn compact(&self, log: &mut Log) -> io::Result<()> {
        let seq = log.seq();
        let state = self.state();
        let allocator = self.allocator();
        let clock = self.clock.setting();
        log.write_snapshot(
            |out| write_snapshot(out, seq, clock, &allocator, &state),
            seq,
        )
    }

    /// Records one change that is not a call, then applies it; when it cannot be
    /// recorded, it is not applied.
    fn change(&self, entry: impl FnOnce(u64) -> Entry, apply: impl FnOnce()) -> io::Result<()> {
        let mut guard = self.store.write();
        if let Some(log) = guard.as_mut() {
            append(log, &entry(log.next_seq()), &[])?;
        }
        apply();
        if let Some(log) = guard.as_mut() {
            self.compact_if_grown(log);
        }
        Ok(())
    }

    /// Changes the clock's setting, ordered with the other changes and recorded first.
    pub fn change_clock(&self, to: impl Fn(Setting) -> Setting) -> io::Result<()> {
        // The setting is read under the store's lock, so no other change slips between.
        let mut guard = self.store.write();
        let clock = to(self.clock.setting());
        if let Some(log) = guard.as_mut() {
            append(
                log,
                &Entry::Clock {
                    seq: log.next_seq(),
                    clock,
                },
                &[],
            )?;
        }
        self.clock.restore(clock);
        drop(guard);
        Ok(())
    }

    /// Switches the region of later allocations, durably.
    pub fn set_region(&self, region: Region) -> io::Result<()> {
        self.change(
            |seq| Entry::Region { seq, region },
            || self.allocator().set_region(region),
        )
    }

    /// Removes an enterprise with everything of it; whether there was one.
    pub fn reset_enterprise(&self, global_id: &str) -> io::Result<bool> {
        let mut found = false;
        // Checked first, so that only a removal that happens is recorded.
        if !self.state().enterprises.contains_key(global_id) {
            return Ok(false);
        }
        self.change(
            |seq| Entry::ResetEnterprise {
                seq,
                enterprise: global_id.to_string(),
            },
            || found = self.state_mut().remove_enterprise(global_id),
        )?;
        Ok(found)
    }

    /// The whole simulator state (records, allocator, clock) as one document.
    pub fn export_state(&self) -> Value {
        let _reading = self.store.read();
        let state = self.state();
        let allocator = self.allocator();
        serde_json::to_value(DocumentRef {
            version: VERSION,
            seq: None,
            clock: self.clock.setting(),
            allocator: &allocator,
            state: &state,
        })
        .expect("the state serialises: string keys, no non-finite numbers")
    }

    /// Replaces the whole state by a document [`Db::export_state`] wrote, or refuses it
    /// with nothing changed.
    pub fn import_state(&self, doc: Value) -> Result<(), ImportError> {
        let (loaded, _) = read_document(doc).map_err(ImportError::invalid)?;
        self.replace_checked(loaded)
    }

    /// As [`Db::import_state`], from the document's bytes, read straight into the state
    /// (no JSON tree of it is built).
    pub fn import_bytes(&self, bytes: &[u8]) -> Result<(), ImportError> {
        let (loaded, _) = read_snapshot(bytes).map_err(ImportError::invalid)?;
        self.replace_checked(loaded)
    }

    /// An imported state, checked against the operations' field rules, then swapped in.
    fn replace_checked(&self, loaded: Loaded) -> Result<(), ImportError> {
        loaded
            .state
            .check_fields(&self.config.password_length)
            .map_err(ImportError::invalid)?;
        self.replace(loaded).map_err(ImportError::Io)
    }

    /// Forgets every record, resets the allocator (the region stays) and the clock.
    pub fn reset(&self) -> io::Result<()> {
        let region = self.allocator().region();
        self.replace(Loaded::fresh(region))
    }

    /// Swaps in a checked state, after writing it as the snapshot when there is a state
    /// file: the state lock first, as the handlers take it, so none sees the new state
    /// with the old allocator.
    fn replace(&self, loaded: Loaded) -> io::Result<()> {
        let mut guard = self.store.write();
        if let Some(log) = guard.as_mut() {
            let seq = log.next_seq();
            log.write_snapshot(
                |out| write_snapshot(out, seq, loaded.clock, &loaded.allocator, &loaded.state),
                seq,
            )?;
        }
        let mut state = self.state_mut();
        let mut allocator = self.allocator();
        let old = std::mem::replace(&mut *state, loaded.state);
        *allocator = loaded.allocator;
        self.clock.restore(loaded.clock);
        // Freed once no lock is held: a 50,000-asset state takes tens of milliseconds to
        // free, which no request should wait for.
        drop((allocator, state, guard));
        drop(old);
        Ok(())
    }

    /// The number of records each kind has, for replies that count them.
    pub fn counts(&self) -> (usize, usize, usize) {
        let state: &State = &self.state();
        (
            state.enterprises.len(),
            state.assets.len(),
            state.members.len(),
        )
    }

    /// The allocator's region.
    pub fn region(&self) -> Region {
        let allocator: &Allocator = &self.allocator();
        allocator.region()
    }
}

/// A failure with the field its body failed on named, found once no lock is held.
fn named<T>(call: &Call, result: Result<T, Failure>) -> Result<T, Failure> {
    result.map_err(|mut failure| {
        call.name_the_field(&mut failure);
        failure
    })
}

/// Appends an entry as the log's next change.
fn append(log: &mut Log, entry: &Entry, body: &[u8]) -> io::Result<()> {
    let meta = serde_json::to_vec(entry)?;
    log.append(&meta, body)
}

/// A payload's entry and the body after it.
fn entry(payload: &Bytes) -> Result<(Entry, Bytes), String> {
    let split = payload
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no entry line")?;
    let entry = serde_json::from_slice(&payload[..split]).map_err(|e| e.to_string())?;
    Ok((entry, payload.slice(split + 1..)))
}
