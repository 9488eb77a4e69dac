//! Persistence: the state file `PATH` (a snapshot), its log `PATH.log` (the changes made
//! since, one record each) and its lock `PATH.lock`. This layer knows bytes and records,
//! not what they mean: the layer above writes a change here before it applies it.
//!
//! Snapshot and log are always replaced whole (written aside, synced, renamed), so a
//! crash leaves either the old file or the new one; an append is one write at the end of
//! the log, synced before it returns, so only the last record can be torn, and it was
//! never acknowledged. A log that is damaged anywhere else, emptied, or missing behind a
//! snapshot that says changes followed it, is refused: starting from it would silently
//! lose acknowledged changes. `--recover` keeps what is whole and moves the log aside.

pub(crate) mod files;
mod frame;

use std::{
    fmt,
    fs::{self, File},
    io::{self, Write as _},
    path::{Path, PathBuf},
    sync::{
        Arc, RwLock, RwLockReadGuard, RwLockWriteGuard,
        atomic::{AtomicU32, Ordering},
    },
};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use files::{lock, replace_file, replace_file_with, sibling};
use frame::{Records, frame, records};

/// What the log's first record says of itself.
const LOG_FORMAT: &str = "licensing-sim log";
/// The version of the log this simulator writes and reads.
const LOG_VERSION: u32 = 2;

/// A state file that cannot be used: [`SimulatorBuilder::start`](crate::SimulatorBuilder::start)
/// fails with it (inside an [`io::Error`]) rather than start without the state it holds.
/// The file is left as it is.
#[derive(Debug)]
pub struct StateFileError {
    path: PathBuf,
    problem: String,
}

impl StateFileError {
    pub(crate) fn new(path: &Path, problem: impl Into<String>) -> Self {
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

/// The log's first record: which snapshot the records after it continue, and the
/// settings of the layer above (the limits the logged changes were made under).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Header {
    format: String,
    version: u32,
    /// The `seq` of the snapshot this log continues.
    after: u64,
    settings: Value,
}

impl Header {
    fn bytes(&self) -> io::Result<Vec<u8>> {
        frame(&serde_json::to_vec(self)?, &[])
    }
}

/// What an opened state file holds, checked as far as this layer can: the snapshot's
/// bytes and the log's records after its header.
pub(crate) struct Opened {
    path: PathBuf,
    log_path: PathBuf,
    lock: File,
    /// `None`: no state file yet, or an empty one (a fresh start).
    pub snapshot: Option<Vec<u8>>,
    /// The settings the log's changes were made under (`None`: no log).
    pub settings: Option<Value>,
    /// The `seq` of the snapshot the log continues.
    pub after: u64,
    /// The changes: byte offset in the log and payload (the entry's JSON line, then its
    /// body).
    pub records: Vec<(usize, Bytes)>,
}

impl Opened {
    /// The log's path, to name it in errors about its records.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }
}

/// How the refusal of a damaged log ends: the way out.
const RECOVER_HINT: &str = "start with --recover (SimulatorBuilder::recover) to keep the \
     state up to the last whole change and move the log aside, or restore the file from a \
     backup";

/// Opens a state file: takes its lock and reads the snapshot and the log. `snapshot_seq`
/// reads the `seq` a snapshot holds (the layer above knows its format). With `recover`,
/// a damaged log gives what is whole before the damage and is moved aside to
/// `PATH.log.damaged`; without, it stops the start with an error naming the file, the
/// byte and the way out.
pub(crate) fn open(
    path: &Path,
    recover: bool,
    snapshot_seq: impl Fn(&[u8]) -> Option<u64>,
) -> Result<Opened, StateFileError> {
    let log_path = sibling(path, ".log");
    let lock = lock(&sibling(path, ".lock"))?;
    // Left by a crash while writing: incomplete, and never renamed into place.
    for tmp in [sibling(path, ".tmp"), sibling(&log_path, ".tmp")] {
        let _ = fs::remove_file(tmp);
    }
    let snapshot = match fs::read(path) {
        // An empty file (`mktemp`) holds no state yet: nothing to lose.
        Ok(bytes) if bytes.is_empty() => None,
        Ok(bytes) => Some(bytes),
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
            None
        }
        Err(e) => return Err(StateFileError::new(path, format!("cannot be read: {e}"))),
    };
    let seq = snapshot.as_deref().and_then(&snapshot_seq).unwrap_or(0);
    let mut opened = Opened {
        path: path.to_path_buf(),
        log_path: log_path.clone(),
        lock,
        snapshot,
        settings: None,
        after: seq,
        records: Vec::new(),
    };
    let bytes = match fs::read(&log_path) {
        Ok(bytes) => Bytes::from(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Every start writes a log beside the snapshot it writes; a snapshot that
            // counts changes without a log beside it lost the changes after them.
            if seq > 0 {
                let problem = format!(
                    "missing, but the state file {} was written with changes logged after \
                     it (change {seq}); {RECOVER_HINT}",
                    path.display()
                );
                refuse_or_recover(&log_path, recover, problem, None)?;
            }
            return Ok(opened);
        }
        Err(e) => {
            return Err(StateFileError::new(
                &log_path,
                format!("cannot be read: {e}"),
            ));
        }
    };
    let (whole, damaged) = match records(&bytes) {
        Ok(Records { whole, torn }) => {
            if let Some(at) = torn.filter(|_| !whole.is_empty()) {
                tracing::warn!(
                    file = %log_path.display(),
                    byte = at,
                    "ignoring a torn last record: a change that was never acknowledged"
                );
            }
            (whole, None)
        }
        Err(damage) => (Vec::new(), Some(damage)),
    };
    if let Some(damage) = damaged {
        let problem = format!("{damage}; {RECOVER_HINT}");
        refuse_or_recover(&log_path, recover, problem, Some(&bytes))?;
        // What is whole before the damage.
        let prefix = bytes.slice(..damage.offset);
        let kept = records(&prefix).map(|r| r.whole).unwrap_or_default();
        return finish(opened, kept, recover);
    }
    finish_checked(&mut opened, whole, recover, &bytes)?;
    Ok(opened)
}

/// The header, then the changes after it.
fn finish_checked(
    opened: &mut Opened,
    whole: Vec<(usize, Bytes)>,
    recover: bool,
    bytes: &Bytes,
) -> Result<(), StateFileError> {
    let log_path = opened.log_path.clone();
    let header = whole.first().and_then(|(_, payload)| header(payload));
    let Some(header) = header else {
        let problem = if bytes.is_empty() {
            "empty, but a log always starts with its header: it was emptied or replaced, \
             and the changes it held are lost"
                .to_string()
        } else {
            format!(
                "record 1 is not the header of a licensing-sim log of version {LOG_VERSION} \
                 (the file is damaged, or not this simulator's)"
            )
        };
        refuse_or_recover(
            &log_path,
            recover,
            format!("{problem}; {RECOVER_HINT}"),
            Some(bytes),
        )?;
        return Ok(());
    };
    if header.after > opened.after {
        let problem = format!(
            "the log continues change {} but the state file holds only up to change {}; \
             {RECOVER_HINT}",
            header.after, opened.after
        );
        refuse_or_recover(&log_path, recover, problem, Some(bytes))?;
        return Ok(());
    }
    opened.after = header.after;
    opened.settings = Some(header.settings);
    opened.records = whole.into_iter().skip(1).collect();
    Ok(())
}

fn finish(
    mut opened: Opened,
    whole: Vec<(usize, Bytes)>,
    recover: bool,
) -> Result<Opened, StateFileError> {
    let bytes = Bytes::new();
    if whole.is_empty() {
        return Ok(opened);
    }
    finish_checked(&mut opened, whole, recover, &bytes)?;
    Ok(opened)
}

fn header(payload: &Bytes) -> Option<Header> {
    let end = payload.iter().position(|&b| b == b'\n')?;
    serde_json::from_slice::<Header>(&payload[..end])
        .ok()
        .filter(|h| h.format == LOG_FORMAT && h.version == LOG_VERSION)
}

/// Without `recover`, the error; with it, a warning, and the log (if any) moved aside to
/// `PATH.log.damaged` so that nothing is deleted.
fn refuse_or_recover(
    log_path: &Path,
    recover: bool,
    problem: String,
    bytes: Option<&Bytes>,
) -> Result<(), StateFileError> {
    if !recover {
        return Err(StateFileError::new(log_path, problem));
    }
    tracing::warn!(file = %log_path.display(), %problem, "recovering: keeping what is whole");
    if bytes.is_some() {
        let aside = sibling(log_path, ".damaged");
        fs::rename(log_path, &aside).map_err(|e| {
            StateFileError::new(log_path, format!("cannot be moved aside to recover: {e}"))
        })?;
        tracing::warn!(file = %aside.display(), "the damaged log is kept here");
    }
    Ok(())
}

/// A seam for tests: makes the next `n` appends fail as a full disk does.
#[derive(Clone, Debug, Default)]
pub(crate) struct WriteFaults(Arc<AtomicU32>);

impl WriteFaults {
    /// Fails the next `n` appends to the log.
    pub fn fail_next(&self, n: u32) {
        self.0.store(n, Ordering::SeqCst);
    }

    fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// The state file and its log while the simulator runs.
pub(crate) struct Log {
    path: PathBuf,
    log_path: PathBuf,
    /// `PATH.log`, written at its end.
    file: File,
    /// Bytes in `PATH.log` that hold whole records.
    size: u64,
    /// Bytes in `PATH`: compaction waits until the log is larger, so that its cost per
    /// change stays bounded whatever the size of the state.
    snapshot_size: u64,
    /// The number of the last change written.
    seq: u64,
    /// Compaction also waits until the log is this large.
    limit: u64,
    header: Header,
    /// Why the log's end is not known to hold only whole records: appends wait until it
    /// is cut back (or replaced).
    broken: Option<String>,
    faults: WriteFaults,
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
    /// Writes `snapshot` (holding every change up to `seq`) as the state file and starts
    /// an empty log after it: what every start does once the state is loaded.
    pub fn start(
        opened: Opened,
        snapshot: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
        seq: u64,
        settings: Value,
        limit: u64,
        faults: WriteFaults,
    ) -> Result<Self, StateFileError> {
        let Opened {
            path,
            log_path,
            lock,
            ..
        } = opened;
        let (_, snapshot_size) = replace_file_with(&path, snapshot)
            .map_err(|e| StateFileError::new(&path, format!("cannot be written: {e}")))?;
        let header = Header {
            format: LOG_FORMAT.to_string(),
            version: LOG_VERSION,
            after: seq,
            settings,
        };
        let record = header
            .bytes()
            .map_err(|e| StateFileError::new(&log_path, format!("cannot be written: {e}")))?;
        let file = replace_file(&log_path, &record)
            .map_err(|e| StateFileError::new(&log_path, format!("cannot be written: {e}")))?;
        Ok(Self {
            path,
            log_path,
            file,
            size: record.len() as u64,
            snapshot_size,
            seq,
            limit,
            header,
            broken: None,
            faults,
            _lock: lock,
        })
    }

    /// The number the next change gets.
    pub fn next_seq(&self) -> u64 {
        self.seq + 1
    }

    /// Appends one change (`meta`, its entry as JSON, then `body`) as change
    /// [`next_seq`](Self::next_seq), synced to disk before it returns. On failure nothing
    /// of it stays in the file: the log is cut back to its last whole record (when even
    /// that fails, appends are refused until a snapshot replaces the log).
    pub fn append(&mut self, meta: &[u8], body: &[u8]) -> io::Result<()> {
        if let Some(why) = &self.broken {
            let why = why.clone();
            self.cut_back()
                .map_err(|e| io::Error::other(format!("{why}; cutting it back: {e}")))?;
        }
        let record = frame(meta, body)?;
        let written = if self.faults.take() {
            Err(io::Error::from_raw_os_error(28)) // ENOSPC, as a full disk answers
        } else {
            self.file
                .write_all(&record)
                .and_then(|()| self.file.sync_data())
        };
        if let Err(e) = written {
            self.broken = Some(format!("{}: {e}", self.log_path.display()));
            if let Err(cut) = self.cut_back() {
                tracing::error!(error = %cut, file = %self.log_path.display(), "cannot cut the log back to its last whole record");
            }
            return Err(e);
        }
        self.size += record.len() as u64;
        self.seq += 1;
        Ok(())
    }

    /// Truncates the log to the records it is known to hold whole.
    fn cut_back(&mut self) -> io::Result<()> {
        self.file.set_len(self.size)?;
        self.file.sync_all()?;
        // The file's cursor is at its end for appends: the length was the only question.
        use std::io::Seek as _;
        self.file.seek(io::SeekFrom::Start(self.size))?;
        self.broken = None;
        Ok(())
    }

    /// Whether the log has grown enough to be folded into the snapshot.
    pub fn wants_compaction(&self) -> bool {
        self.size > self.limit.max(self.snapshot_size)
    }

    /// Replaces the snapshot by what `write` writes, which holds every change up to `seq`
    /// (the moment the rename lands, it is the durable state), then starts an empty log
    /// after it.
    /// Until the new log lands the old one stays valid: its records are all in the
    /// snapshot, which loading skips.
    pub fn write_snapshot(
        &mut self,
        write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
        seq: u64,
    ) -> io::Result<()> {
        let (_, size) = replace_file_with(&self.path, write)?;
        self.snapshot_size = size;
        self.seq = seq;
        self.header.after = seq;
        let record = self.header.bytes()?;
        self.file = replace_file(&self.log_path, &record)?;
        self.size = record.len() as u64;
        self.broken = None;
        Ok(())
    }

    /// The number of the last change the files hold.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// Orders the changes and makes them durable: a change holds it for writing from before
/// its record is written until it is applied, so the log's order is the order they were
/// applied in; reads hold it for reading, so that no reply shows a change that is not
/// durable yet. Without a state file it only orders.
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_file() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        (dir, path)
    }

    fn started(path: &Path) -> Log {
        let opened = open(path, false, |_| Some(0)).unwrap();
        Log::start(
            opened,
            |out: &mut dyn io::Write| out.write_all(b"{}"),
            0,
            Value::Null,
            u64::MAX,
            WriteFaults::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_failed_append_leaves_nothing_behind() {
        let (_dir, path) = state_file();
        let mut log = started(&path);
        log.append(b"{\"n\":1}", b"").unwrap();
        let faults = log.faults.clone();
        faults.fail_next(1);
        let e = log.append(b"{\"n\":2}", b"lost").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28));
        log.append(b"{\"n\":3}", b"").unwrap();
        assert_eq!(log.seq(), 2);
        drop(log);
        let opened = open(&path, false, |_| Some(0)).unwrap();
        let metas: Vec<&[u8]> = opened
            .records
            .iter()
            .map(|(_, p)| &p[..p.iter().position(|&b| b == b'\n').unwrap()])
            .collect();
        assert_eq!(metas, [&b"{\"n\":1}"[..], b"{\"n\":3}"]);
    }

    #[test]
    fn an_emptied_or_garbled_log_is_refused_and_recover_keeps_the_snapshot() {
        let (_dir, path) = state_file();
        let mut log = started(&path);
        log.append(b"{\"n\":1}", b"").unwrap();
        drop(log);
        let log_path = sibling(&path, ".log");
        for bytes in [Vec::new(), vec![0x42; 100]] {
            fs::write(&log_path, &bytes).unwrap();
            let Err(e) = open(&path, false, |_| Some(0)) else {
                panic!("a damaged log is refused");
            };
            let text = e.to_string();
            assert!(text.contains("state.json.log"), "{text}");
            assert!(text.contains("--recover"), "{text}");
        }
        let opened = open(&path, true, |_| Some(0)).unwrap();
        assert!(opened.records.is_empty());
        assert!(sibling(&log_path, ".damaged").exists());
    }

    #[test]
    fn a_missing_log_behind_a_counted_snapshot_is_refused() {
        let (_dir, path) = state_file();
        fs::write(&path, b"{\"seq\":5}").unwrap();
        let Err(e) = open(&path, false, |_| Some(5)) else {
            panic!("a missing log is refused");
        };
        assert!(e.to_string().contains("missing"), "{e}");
        assert!(open(&path, false, |_| Some(0)).is_ok());
        assert!(open(&path, true, |_| Some(5)).is_ok());
    }

    #[test]
    fn damage_in_the_middle_names_the_byte() {
        let (_dir, path) = state_file();
        let mut log = started(&path);
        for n in 0..3 {
            log.append(format!("{{\"n\":{n}}}").as_bytes(), b"")
                .unwrap();
        }
        drop(log);
        let log_path = sibling(&path, ".log");
        let mut bytes = fs::read(&log_path).unwrap();
        let at = bytes.len() - 20;
        bytes[at] ^= 0xff;
        fs::write(&log_path, &bytes).unwrap();
        let Err(e) = open(&path, false, |_| Some(0)) else {
            panic!("damage before the last record is refused");
        };
        assert!(e.to_string().contains("at byte"), "{e}");
        let opened = open(&path, true, |_| Some(0)).unwrap();
        assert!(opened.records.len() < 3);
    }
}
