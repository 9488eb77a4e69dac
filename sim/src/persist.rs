//! The simulator's state as one JSON document (export, import: checked, all or nothing;
//! resets), and the state file that makes it durable.
//!
//! The state file `PATH` holds a snapshot: the exported document plus `seq`, the number of
//! the last change it includes. `PATH.log` holds the changes made since, one record per
//! mutating call (and per clock, region or enterprise reset), each synced to disk before
//! the call is answered. Starting replays the log over the snapshot through the same
//! handlers, with the clock reading each call had, then writes a new snapshot and an empty
//! log (compaction); so does a log grown past its limit. Snapshot and log are always
//! replaced whole (written aside, synced, renamed), so a crash leaves either the old file
//! or the new one; only the log's last record can be torn, and it was never acknowledged.

use std::{
    collections::BTreeMap,
    fmt,
    fs::{self, File, OpenOptions},
    io::{self, Write as _},
    path::{Path, PathBuf},
    sync::{RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use axum::body::Bytes;
use licensing_sdk::{
    ErrorCode,
    operations::{Method, Operation},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Config, Shared,
    clock::Setting,
    http::{Call, Failure},
    routes,
    state::{Allocator, Invalid, Region, State},
};

/// The version of the exported document this simulator writes and reads.
pub(crate) const VERSION: u32 = 1;

/// The document [`Shared::export_state`] writes; the state file's snapshot adds `seq`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DocumentRef<'a> {
    version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    clock: Setting,
    allocator: &'a Allocator,
    state: &'a State,
}

/// The document [`Shared::import_state`] reads; omitted parts are empty (a fresh clock,
/// no numbers handed out, no records).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Document {
    #[allow(dead_code, reason = "checked before the rest is read")]
    version: u32,
    /// Only in the state file: the last change the snapshot includes.
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    clock: Setting,
    #[serde(default = "fresh_allocator")]
    allocator: Allocator,
    #[serde(default)]
    state: State,
}

fn fresh_allocator() -> Allocator {
    Allocator::new(Region::Domestic)
}

/// A checked state, ready to replace the running one.
pub(crate) struct Loaded {
    pub state: State,
    pub allocator: Allocator,
    pub clock: Setting,
}

/// Why [`Simulator::import_state`](crate::Simulator::import_state) refused a document;
/// the simulator's state is unchanged.
#[derive(Debug)]
#[non_exhaustive]
pub enum ImportError {
    /// The document is not a state the simulator can hold: a field of the wrong shape, a
    /// broken rule or a reference that leads nowhere. `path` is the JSON path of the
    /// offending field (`state.assets.8000000001.products[0].id`), empty when it is the
    /// document itself.
    Invalid {
        /// Where in the document.
        path: String,
        /// What is wrong there.
        message: String,
    },
    /// The new state could not be written to the state file (see
    /// [`SimulatorBuilder::state_file`](crate::SimulatorBuilder::state_file)); the
    /// simulator's state is unchanged.
    Io(io::Error),
}

impl ImportError {
    fn invalid(invalid: Invalid) -> Self {
        ImportError::Invalid {
            path: invalid.path,
            message: invalid.message,
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Invalid { path, message } if path.is_empty() => f.write_str(message),
            ImportError::Invalid { path, message } => write!(f, "{path}: {message}"),
            ImportError::Io(e) => write!(f, "the state file cannot be written: {e}"),
        }
    }
}

impl std::error::Error for ImportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ImportError::Io(e) => Some(e),
            ImportError::Invalid { .. } => None,
        }
    }
}

/// Reads a document: the version first (a later version's fields mean something else),
/// then everything in one pass that tracks where it is, then the references.
fn read_document(doc: Value) -> Result<(Loaded, Option<u64>), Invalid> {
    check_version(doc.get("version"), doc.is_object())?;
    let document: Document = serde_path_to_error::deserialize(doc).map_err(located)?;
    finish(document)
}

/// The same from the bytes of a state file, without building a `Value` of it first.
fn read_snapshot(bytes: &[u8]) -> Result<(Loaded, Option<u64>), Invalid> {
    #[derive(Deserialize)]
    struct Peek {
        version: Option<Value>,
    }
    let peek: Peek = serde_json::from_slice(bytes)
        .map_err(|e| Invalid::new("", format!("not a JSON object: {e}")))?;
    check_version(peek.version.as_ref(), true)?;
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let document: Document =
        serde_path_to_error::deserialize(&mut deserializer).map_err(located)?;
    finish(document)
}

fn check_version(version: Option<&Value>, is_object: bool) -> Result<(), Invalid> {
    match version {
        Some(v) if v.as_u64() == Some(u64::from(VERSION)) => Ok(()),
        Some(v) => Err(Invalid::new(
            "version",
            format!("unsupported version {v} (this simulator reads version {VERSION})"),
        )),
        None if is_object => Err(Invalid::new("", "missing field `version`")),
        None => Err(Invalid::new("", "the state must be a JSON object")),
    }
}

fn located(e: serde_path_to_error::Error<serde_json::Error>) -> Invalid {
    let path = e.path().to_string();
    let path = if path == "." { String::new() } else { path };
    Invalid::new(path, e.into_inner().to_string())
}

fn finish(document: Document) -> Result<(Loaded, Option<u64>), Invalid> {
    let Document {
        seq,
        clock,
        allocator,
        mut state,
        ..
    } = document;
    allocator.check()?;
    state.reindex(&allocator)?;
    let loaded = Loaded {
        state,
        allocator,
        clock,
    };
    Ok((loaded, seq))
}

impl Loaded {
    /// Nothing yet: what a simulator without a state file starts with.
    pub fn fresh(region: Region) -> Self {
        Self {
            state: State::default(),
            allocator: Allocator::new(region),
            clock: Setting::default(),
        }
    }
}

/// The document of a state as bytes, with the sequence number of the state file.
fn snapshot_bytes(seq: u64, clock: Setting, allocator: &Allocator, state: &State) -> Vec<u8> {
    serde_json::to_vec(&DocumentRef {
        version: VERSION,
        seq: Some(seq),
        clock,
        allocator,
        state,
    })
    .expect("the state serialises: string keys, no non-finite numbers")
}

/// A state file that cannot be used: [`SimulatorBuilder::start`](crate::SimulatorBuilder::start)
/// fails with it (inside an [`io::Error`]) rather than start without the state it holds.
/// The file is left as it is.
#[derive(Debug)]
pub struct StateFileError {
    path: PathBuf,
    problem: String,
}

impl StateFileError {
    fn new(path: &Path, problem: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            problem: problem.into(),
        }
    }

    /// The file at fault: the state file, its log (`PATH.log`) or its lock (`PATH.lock`).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl fmt::Display for StateFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for StateFileError {}

impl From<StateFileError> for io::Error {
    fn from(e: StateFileError) -> Self {
        io::Error::other(e)
    }
}

/// The log's first record: what the records after it continue, and the settings the
/// handlers read (a restart with other limits still replays them as they ran).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Header {
    format: String,
    version: u32,
    /// The `seq` of the snapshot this log continues.
    after: u64,
    password_length: [usize; 2],
    trial_member_limit: usize,
}

const LOG_FORMAT: &str = "licensing-sim log";

impl Header {
    fn of(config: &Config, after: u64) -> Self {
        Self {
            format: LOG_FORMAT.to_string(),
            version: VERSION,
            after,
            password_length: [
                *config.password_length.start(),
                *config.password_length.end(),
            ],
            trial_member_limit: config.trial_member_limit,
        }
    }

    /// The configuration the logged calls ran with.
    fn config(&self, current: &Config) -> Config {
        Config {
            password_length: self.password_length[0]..=self.password_length[1],
            trial_member_limit: self.trial_member_limit,
            ..current.clone()
        }
    }
}

/// One change, as the log keeps it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
enum Entry {
    /// A mutating call whose handler ran, and the code it answered. Its body follows the
    /// record's JSON line.
    #[serde(rename_all = "camelCase")]
    Call {
        seq: u64,
        op: String,
        /// The clock reading every time it wrote.
        now: i64,
        path: BTreeMap<String, String>,
        query: Vec<(String, String)>,
        content_type: Option<String>,
        /// Why the body could not be read (it is then absent).
        body_error: Option<String>,
        code: String,
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

/// CRC-32 (IEEE), the checksum of each record: a record is whole or it is not.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = !0u32;
    for part in parts {
        for &b in *part {
            c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
        }
    }
    !c
}

/// Bytes before a record's payload: its length and checksum, both little-endian `u32`.
const FRAME: usize = 8;
/// No record is larger (a request body is at most 256 MiB).
const MAX_RECORD: usize = 1 << 30;

/// `len | crc32(len, payload) | payload`, where the payload is the entry's JSON, a
/// newline, and the call's body.
fn frame(meta: &[u8], body: &[u8]) -> io::Result<Vec<u8>> {
    let len = meta.len() + 1 + body.len();
    let len32 = u32::try_from(len)
        .ok()
        .filter(|_| len <= MAX_RECORD)
        .ok_or_else(|| io::Error::other("a record larger than 1 GiB"))?;
    let mut record = Vec::with_capacity(FRAME + len);
    record.extend_from_slice(&len32.to_le_bytes());
    record.extend_from_slice(&[0; 4]);
    record.extend_from_slice(meta);
    record.push(b'\n');
    record.extend_from_slice(body);
    let crc = crc32(&[&record[..4], &record[FRAME..]]);
    record[4..FRAME].copy_from_slice(&crc.to_le_bytes());
    Ok(record)
}

/// The whole records of a log (byte offset, payload), and where a torn last record
/// starts.
struct Records {
    whole: Vec<(usize, Bytes)>,
    torn: Option<usize>,
}

/// The whole records of a log, with their byte offsets, and where a torn last record
/// starts. A damaged record with more after it is not a torn write (only the last record
/// can be in flight): the log is refused.
fn records(bytes: &Bytes) -> Result<Records, String> {
    let mut records = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        let claimed = rest
            .get(..4)
            .map(|len| FRAME + u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize);
        let whole = claimed
            .filter(|&end| end > FRAME && end <= rest.len())
            .filter(|&end| {
                let crc = u32::from_le_bytes(rest[4..FRAME].try_into().expect("4 bytes"));
                crc == crc32(&[&rest[..4], &rest[FRAME..end]])
            });
        match whole {
            Some(end) => {
                records.push((pos, bytes.slice(pos + FRAME..pos + end)));
                pos += end;
            }
            None if claimed.is_none_or(|end| end >= rest.len()) || rest.iter().all(|&b| b == 0) => {
                return Ok(Records {
                    whole: records,
                    torn: Some(pos),
                });
            }
            None => {
                return Err(format!(
                    "record {} at byte {pos} is damaged (its checksum does not match) and \
                     more records follow it; the changes after it cannot be replayed",
                    records.len() + 1
                ));
            }
        }
    }
    Ok(Records {
        whole: records,
        torn: None,
    })
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

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A new file only the owner can read: it holds the employees' passwords.
fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Makes a rename in `path`'s directory durable.
fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Writes `bytes` to `path` whole or not at all: aside, synced, renamed over it.
fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<File> {
    let tmp = sibling(path, ".tmp");
    let mut file = create_private(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    sync_dir(path)?;
    Ok(file)
}

/// Holds `PATH.lock` for as long as the simulator runs, so that two simulators never
/// write one state file.
fn lock(path: &Path) -> Result<File, StateFileError> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(path)
        .map_err(|e| StateFileError::new(path, format!("cannot be opened: {e}")))?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd as _;
        // SAFETY: `flock` on a file descriptor this function owns; no memory is shared.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if locked != 0 {
            let e = io::Error::last_os_error();
            return Err(StateFileError::new(
                path,
                format!("the state file is in use by another simulator ({e})"),
            ));
        }
    }
    Ok(file)
}

/// The state file and its log while the simulator runs.
pub(crate) struct Log {
    path: PathBuf,
    log_path: PathBuf,
    /// `PATH.log`, written at its end.
    file: File,
    /// Bytes in `PATH.log`.
    size: u64,
    /// Bytes in `PATH`: compaction waits until the log is larger, so that its cost per
    /// change stays bounded whatever the size of the state.
    snapshot_size: u64,
    /// The number of the last change written.
    seq: u64,
    /// Compaction also waits until the log is this large.
    limit: u64,
    header: Header,
    /// Why changes can no longer be made durable.
    broken: Option<String>,
    _lock: File,
}

impl fmt::Debug for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Log")
            .field("path", &self.path)
            .field("seq", &self.seq)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Log {
    /// Appends one change and syncs it to disk.
    fn append(&mut self, entry: &Entry, body: &[u8]) -> io::Result<()> {
        if let Some(why) = &self.broken {
            return Err(io::Error::other(why.clone()));
        }
        let meta = serde_json::to_vec(entry)?;
        let record = frame(&meta, body)?;
        let written = self
            .file
            .write_all(&record)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            self.broken = Some(format!("{}: {e}", self.log_path.display()));
            return Err(e);
        }
        self.size += record.len() as u64;
        self.seq = entry.seq();
        Ok(())
    }

    fn next_seq(&self) -> u64 {
        self.seq + 1
    }

    fn wants_compaction(&self) -> bool {
        self.size > self.limit.max(self.snapshot_size)
    }

    /// Replaces the snapshot by `bytes` (which include every change up to `seq`): the
    /// moment the rename lands, the new state is the durable one.
    fn write_snapshot(&mut self, bytes: &[u8], seq: u64) -> io::Result<()> {
        replace_file(&self.path, bytes)?;
        self.snapshot_size = bytes.len() as u64;
        self.seq = seq;
        Ok(())
    }

    /// Starts an empty log after the snapshot just written. Until it lands the old log
    /// stays valid: its records are all in the snapshot, which replay skips.
    fn restart(&mut self) -> io::Result<()> {
        self.header.after = self.seq;
        let meta = serde_json::to_vec(&self.header)?;
        let record = frame(&meta, &[])?;
        self.file = replace_file(&self.log_path, &record)?;
        self.size = record.len() as u64;
        self.broken = None;
        Ok(())
    }
}

/// Orders the changes and makes them durable: mutating calls hold it for writing from
/// before their handler runs until their record is on disk, so the log's order is the
/// order they were applied in, and reads hold it for reading, so that no reply shows a
/// change that is not durable yet. Without a state file it only orders.
#[derive(Debug, Default)]
pub(crate) struct Store {
    log: RwLock<Option<Log>>,
}

impl Store {
    pub fn new(log: Option<Log>) -> Self {
        Self {
            log: RwLock::new(log),
        }
    }

    pub fn read(&self) -> RwLockReadGuard<'_, Option<Log>> {
        self.log
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, Option<Log>> {
        self.log
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes a clock change durable (the caller holds the write guard).
    pub fn clock_changed(log: &mut Option<Log>, clock: Setting) {
        if let Some(log) = log.as_mut() {
            let entry = Entry::Clock {
                seq: log.next_seq(),
                clock,
            };
            if let Err(e) = log.append(&entry, &[]) {
                tracing::error!(error = %e, "the clock change is not durable: the state file cannot be written");
            }
        }
    }
}

/// Opens the state file: loads the snapshot, replays the log over it, applies `region`
/// when given, and compacts (a new snapshot and an empty log), before any request is
/// served. Nothing is written unless all of that succeeded.
pub(crate) fn open(
    path: &Path,
    config: &Config,
    region: Option<Region>,
    limit: u64,
) -> Result<(Loaded, Log), StateFileError> {
    let log_path = sibling(path, ".log");
    let lock = lock(&sibling(path, ".lock"))?;
    // Left by a crash while writing: incomplete, and never renamed into place.
    for tmp in [sibling(path, ".tmp"), sibling(&log_path, ".tmp")] {
        let _ = fs::remove_file(tmp);
    }
    let (mut loaded, snapshot_seq) = match fs::read(path) {
        // An empty file (`mktemp`) holds no state yet: nothing to lose.
        Ok(bytes) if bytes.is_empty() => (Loaded::fresh(Region::default()), 0),
        Ok(bytes) => {
            let (loaded, seq) = read_snapshot(&bytes).map_err(|e| {
                let at = if e.path.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", e.path)
                };
                StateFileError::new(path, format!("not a usable state: {at}{}", e.message))
            })?;
            (loaded, seq.unwrap_or(0))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if log_path.exists() {
                return Err(StateFileError::new(
                    &log_path,
                    format!(
                        "a log without its state file {}; move it away to start afresh",
                        path.display()
                    ),
                ));
            }
            (Loaded::fresh(Region::default()), 0)
        }
        Err(e) => return Err(StateFileError::new(path, format!("cannot be read: {e}"))),
    };
    let log_bytes = match fs::read(&log_path) {
        Ok(bytes) => Bytes::from(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Bytes::new(),
        Err(e) => {
            return Err(StateFileError::new(
                &log_path,
                format!("cannot be read: {e}"),
            ));
        }
    };
    let seq = replay(&log_path, &log_bytes, &mut loaded, snapshot_seq, config)
        .map_err(|problem| StateFileError::new(&log_path, problem))?;
    if let Some(region) = region {
        loaded.allocator.set_region(region);
    }
    let snapshot = snapshot_bytes(seq, loaded.clock, &loaded.allocator, &loaded.state);
    replace_file(path, &snapshot)
        .map_err(|e| StateFileError::new(path, format!("cannot be written: {e}")))?;
    let header = Header::of(config, seq);
    let empty = || -> io::Result<(File, usize)> {
        let record = frame(&serde_json::to_vec(&header)?, &[])?;
        Ok((replace_file(&log_path, &record)?, record.len()))
    };
    let (file, size) =
        empty().map_err(|e| StateFileError::new(&log_path, format!("cannot be written: {e}")))?;
    let log = Log {
        path: path.to_path_buf(),
        log_path,
        file,
        size: size as u64,
        snapshot_size: snapshot.len() as u64,
        seq,
        limit,
        header,
        broken: None,
        _lock: lock,
    };
    Ok((loaded, log))
}

/// Applies the log's changes after the snapshot's, through the handlers that made them,
/// each with the clock reading it had and the limits of its time; every call must answer
/// the code it answered then. Returns the number of the last change.
fn replay(
    log_path: &Path,
    bytes: &Bytes,
    loaded: &mut Loaded,
    snapshot_seq: u64,
    current: &Config,
) -> Result<u64, String> {
    let Records {
        whole: records,
        torn,
    } = records(bytes)?;
    if let Some(at) = torn {
        tracing::warn!(
            file = %log_path.display(),
            byte = at,
            "ignoring a torn last record: a change that was never acknowledged"
        );
    }
    let Some(((_, first), rest)) = records.split_first() else {
        return Ok(snapshot_seq);
    };
    let header: Header = first
        .iter()
        .position(|&b| b == b'\n')
        .and_then(|end| serde_json::from_slice(&first[..end]).ok())
        .filter(|h: &Header| h.format == LOG_FORMAT && h.version == VERSION)
        .ok_or("record 1 is not the header of a licensing-sim log of this version")?;
    if header.after > snapshot_seq {
        return Err(format!(
            "the log continues change {} but the state file holds only up to change {snapshot_seq}",
            header.after
        ));
    }
    let shared = Shared::new(
        header.config(current),
        crate::FaultSettings::default(),
        std::mem::replace(loaded, Loaded::fresh(Region::default())),
        None,
    );
    let mut seq = header.after;
    for (n, (offset, payload)) in rest.iter().enumerate() {
        let at = format!("record {} at byte {offset}", n + 2);
        let (entry, body) = entry(payload).map_err(|e| format!("{at}: {e}"))?;
        if entry.seq() != seq + 1 {
            return Err(format!(
                "{at}: change {} where {} was expected",
                entry.seq(),
                seq + 1
            ));
        }
        seq += 1;
        if seq <= snapshot_seq {
            continue;
        }
        apply(&shared, entry, body).map_err(|e| format!("{at}: {e}"))?;
    }
    *loaded = shared.into_loaded();
    Ok(seq.max(snapshot_seq))
}

/// Applies one logged change to the state being rebuilt.
fn apply(shared: &Shared, entry: Entry, body: Bytes) -> Result<(), String> {
    match entry {
        Entry::Call {
            op,
            now,
            path,
            query,
            content_type,
            body_error,
            code,
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
            let _pin = shared.clock.pin(now);
            let replayed = routes::replay(shared, &op, &call)
                .ok_or_else(|| format!("no operation {op:?} in this simulator"))?;
            let replayed = match &replayed {
                Ok(()) => "0",
                Err(failure) => failure.code.as_str(),
            };
            if replayed != code {
                return Err(format!(
                    "{op} answered code {code} when it was made but {replayed} when replayed; \
                     the state cannot be rebuilt as it was"
                ));
            }
        }
        Entry::Clock { clock, .. } => shared.clock.restore(clock),
        Entry::Region { region, .. } => shared.allocator().set_region(region),
        Entry::ResetEnterprise { enterprise, .. } => {
            shared.state_mut().remove_enterprise(&enterprise);
        }
    }
    Ok(())
}

/// What a mutating call answers when it cannot be made durable: the documented
/// "network exception, retry" of every operation.
fn not_durable() -> Failure {
    Failure::new(
        ErrorCode::NetworkException,
        "the simulator cannot write its state file (see its log)",
    )
}

impl Shared {
    /// Runs an operation's handler. A read runs beside other reads; a mutating call
    /// (every method but GET) runs alone, with one clock reading for every time it
    /// writes, and with a state file is on disk before this returns: its record is
    /// written whatever the handler answered, since a partial failure changes state too.
    pub fn run<T>(
        &self,
        op: &Operation,
        call: &Call,
        handler: fn(&Shared, &Call) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        if op.method == Method::Get {
            let _reading = self.store.read();
            return handler(self, call);
        }
        let mut guard = self.store.write();
        if let Some(log) = guard.as_mut()
            && self.heal(log).is_err()
        {
            return Err(not_durable());
        }
        let now = self.clock.now_ms();
        let result = {
            let _pin = self.clock.pin(now);
            handler(self, call)
        };
        let Some(log) = guard.as_mut() else {
            return result;
        };
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
            // The nonce was checked by the gate, which replay does not run.
            query: call
                .query_pairs()
                .filter(|(k, _)| *k != "g_nonce")
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            content_type: call.content_type().map(str::to_owned),
            body_error: body.err().map(str::to_owned),
            code: match &result {
                Ok(_) => "0".to_string(),
                Err(failure) => failure.code.as_str().to_string(),
            },
        };
        let body = body.map_or(&[][..], |b| &b[..]);
        match self.log_change(log, &entry, body) {
            Ok(()) => result,
            Err(_) => Err(not_durable()),
        }
    }

    /// Writes one change, already applied, to the log (the caller holds the store for
    /// writing). When that fails, only a snapshot that includes the change can make the
    /// file agree with memory again, so one is tried; failing that, changes are refused
    /// until one succeeds. A log grown past its limit is compacted.
    fn log_change(&self, log: &mut Log, entry: &Entry, body: &[u8]) -> io::Result<()> {
        if let Err(e) = log.append(entry, body) {
            tracing::error!(error = %e, "cannot log a change; writing the whole state instead");
            return self.compact(log).inspect_err(|e| {
                tracing::error!(error = %e, "the state file cannot be written: refusing changes");
                log.broken.get_or_insert_with(|| e.to_string());
            });
        }
        if log.wants_compaction()
            && let Err(e) = self.compact(log)
        {
            // The log still holds every change; compaction is tried after the next one.
            tracing::warn!(error = %e, "cannot compact the state file's log");
        }
        Ok(())
    }

    /// After a change could not be written: the whole state, or still no changes.
    fn heal(&self, log: &mut Log) -> io::Result<()> {
        if log.broken.is_none() {
            return Ok(());
        }
        self.compact(log)
    }

    /// Writes the current state as the snapshot and starts an empty log.
    fn compact(&self, log: &mut Log) -> io::Result<()> {
        let seq = log.seq;
        let bytes = {
            let state = self.state();
            let allocator = self.allocator();
            snapshot_bytes(seq, self.clock.setting(), &allocator, &state)
        };
        log.write_snapshot(&bytes, seq)?;
        log.restart()
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

    /// Replaces the whole state by a document [`Shared::export_state`] wrote, or refuses
    /// it with nothing changed.
    pub fn import_state(&self, doc: Value) -> Result<(), ImportError> {
        let (loaded, _) = read_document(doc).map_err(ImportError::invalid)?;
        self.replace(loaded).map_err(ImportError::Io)
    }

    /// Forgets every record, resets the allocator (the region stays) and the clock.
    pub fn reset(&self) -> io::Result<()> {
        let region = self.allocator().region();
        self.replace(Loaded::fresh(region))
    }

    /// Removes an enterprise with everything of it; whether there was one.
    pub fn reset_enterprise(&self, global_id: &str) -> io::Result<bool> {
        let mut guard = self.store.write();
        if let Some(log) = guard.as_mut() {
            self.heal(log)?;
        }
        if !self.state_mut().remove_enterprise(global_id) {
            return Ok(false);
        }
        if let Some(log) = guard.as_mut() {
            let entry = Entry::ResetEnterprise {
                seq: log.next_seq(),
                enterprise: global_id.to_string(),
            };
            self.log_change(log, &entry, &[])?;
        }
        Ok(true)
    }

    /// Switches the region of later allocations, durably.
    pub fn set_region(&self, region: Region) {
        let mut guard = self.store.write();
        self.allocator().set_region(region);
        if let Some(log) = guard.as_mut() {
            let entry = Entry::Region {
                seq: log.next_seq(),
                region,
            };
            // Failing, it is logged, and changes are refused until the state is written.
            let _ = self.log_change(log, &entry, &[]);
        }
    }

    /// Swaps in a checked state, after writing it as the snapshot when there is a state
    /// file: the state lock first, as the handlers take it, so none sees the new state
    /// with the old allocator.
    fn replace(&self, loaded: Loaded) -> io::Result<()> {
        let mut guard = self.store.write();
        if let Some(log) = guard.as_mut() {
            let seq = log.next_seq();
            let bytes = snapshot_bytes(seq, loaded.clock, &loaded.allocator, &loaded.state);
            log.write_snapshot(&bytes, seq)?;
            if let Err(e) = log.restart() {
                tracing::warn!(error = %e, "cannot start a new log after writing the state file");
            }
        }
        let mut state = self.state_mut();
        let mut allocator = self.allocator();
        *state = loaded.state;
        *allocator = loaded.allocator;
        self.clock.restore(loaded.clock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_the_ieee_one() {
        assert_eq!(crc32(&[b"123456789"]), 0xCBF4_3926);
        assert_eq!(crc32(&[b"1234", b"56789"]), 0xCBF4_3926);
    }

    #[test]
    fn a_torn_last_record_is_ignored_and_a_damaged_one_before_others_refused() {
        let one = frame(b"{\"a\":1}", b"body").unwrap();
        let two = frame(b"{\"b\":2}", b"").unwrap();
        let log: Vec<u8> = [one.clone(), two.clone()].concat();
        let Records { whole, torn } = records(&Bytes::from(log.clone())).unwrap();
        assert_eq!((whole.len(), torn), (2, None));
        assert_eq!(&whole[0].1[..], b"{\"a\":1}\nbody");

        for cut in 1..two.len() {
            let torn_log = Bytes::from(log[..one.len() + cut].to_vec());
            let Records { whole, torn } = records(&torn_log).unwrap();
            assert_eq!((whole.len(), torn), (1, Some(one.len())), "cut at {cut}");
        }
        let zeros = Bytes::from([one.clone(), vec![0; 64]].concat());
        assert_eq!(records(&zeros).unwrap().torn, Some(one.len()));
        let mut garbled_last = log.clone();
        *garbled_last.last_mut().unwrap() ^= 1;
        assert_eq!(
            records(&Bytes::from(garbled_last)).unwrap().torn,
            Some(one.len())
        );

        let mut damaged = log.clone();
        damaged[FRAME + 2] ^= 1;
        let Err(error) = records(&Bytes::from(damaged)) else {
            panic!("a damaged record before another is refused");
        };
        assert!(
            error.starts_with("record 1 at byte 0 is damaged"),
            "{error}"
        );
    }
}
