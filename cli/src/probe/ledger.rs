//! The ledger of a run's writes, on disk before each write is sent, as `orders submit`'s
//! results file is: a write-ahead log, one JSON object a line, appended and synced
//! (`fdatasync`) before the request it announces leaves.
//!
//! Its first line names the run (`{"ledger": {...}}`: the deployment's URLs, the ids it
//! may write to, the write budget). Then, per write (numbered `seq`):
//!
//! - `intent`: what is about to be written and what undoes it, synced before it is sent;
//! - `written`: its outcome (`applied`, `refused`, or `unknown` when no reply came), and
//!   what the reply said that the undo needs (the probe employee's id);
//! - `undoing`: synced before the undo is sent;
//! - `undone`: the undo's outcome (`applied`, or `not needed` when a read showed nothing
//!   to undo).
//!
//! A write is undone once: a write with `undone` is never touched again. One whose
//! `written` or `undone` is missing (a run killed, a reply lost) is read back on the
//! deployment before anything is sent, and undone only if the read shows it applied and
//! not yet undone. A torn last line (a kill in mid-write) stands for a record that was
//! not synced, so for a request that was not sent. One run holds a ledger at a time
//! (`flock` on the file itself).

use std::{
    collections::BTreeMap,
    fs::File,
    io::Write as _,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use super::context::Inputs;
use crate::error::CliError;

/// Writes a run may make unless `--max-writes` says otherwise: the plan's reversible
/// writes take four.
pub const DEFAULT_MAX_WRITES: u64 = 10;

/// What a ledger belongs to: its first line, `{"ledger": {...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub version: u32,
    pub order_url: String,
    pub member_url: String,
    /// The ids the run may write to.
    pub inputs: Inputs,
    pub max_writes: u64,
}

#[derive(Serialize, Deserialize)]
struct Header {
    ledger: Run,
}

/// An employee's editable fields, as read before an edit: what the undo sets back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberFields {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub department_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remark: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_mobile: Option<String>,
}

/// A write, and so what undoes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Write {
    /// `disableLocks` of a lock read as enabled; undone by `enableLocks`.
    DisableLock { enterprise: String, asset: String },
    /// `disableLocks` of a number no enterprise has; undone by `enableLocks` only if the
    /// deployment said it disabled one.
    #[serde(rename_all = "camelCase")]
    UnknownLock { asset: String },
    /// `addMembers` of the probe employee (an account of the probe's own); undone by
    /// `deleteMember` of the employee a read finds with that account.
    #[serde(rename_all = "camelCase")]
    AddMember {
        enterprise: String,
        user_name: String,
    },
    /// `editMember` of the probe employee; undone by an edit back to `before`.
    #[serde(rename_all = "camelCase")]
    EditMember {
        enterprise: String,
        member: String,
        user_name: String,
        before: MemberFields,
    },
    /// A write that cannot be taken back (`--irreversible`, a simulator only).
    Irreversible { operation: String },
}

/// A record after the first line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "event")]
pub enum Record {
    Intent {
        seq: u64,
        write: Write,
    },
    Written {
        seq: u64,
        result: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        member: Option<String>,
    },
    Undoing {
        seq: u64,
    },
    Undone {
        seq: u64,
        result: String,
    },
}

impl Record {
    fn seq(&self) -> u64 {
        match self {
            Record::Intent { seq, .. }
            | Record::Written { seq, .. }
            | Record::Undoing { seq }
            | Record::Undone { seq, .. } => *seq,
        }
    }
}

/// What the ledger says of one write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub write: Write,
    /// `applied`, `refused`, `not sent` or `unknown`; none when no outcome was recorded.
    pub written: Option<String>,
    /// The probe employee's id, when the add's reply gave it.
    pub member: Option<String>,
    /// Whether an undo was announced.
    pub undoing: bool,
    /// The undo's outcome, once recorded.
    pub undone: Option<String>,
}

impl Entry {
    /// Whether it may still need undoing.
    pub fn open(&self) -> bool {
        self.undone.is_none() && !matches!(self.written.as_deref(), Some("refused" | "not sent"))
    }
}

/// An open ledger: appended to, one run at a time.
pub struct Ledger {
    path: PathBuf,
    file: File,
    pub run: Run,
    pub entries: BTreeMap<u64, Entry>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn failed(path: &Path, e: &std::io::Error) -> CliError {
    CliError::usage(format!("ledger {}: {e}", path.display()))
}

impl Ledger {
    /// A new ledger at `path`, which must not exist (a ledger is never overwritten: it may
    /// hold writes still to undo).
    pub fn create(path: &Path, run: Run) -> Result<Self, CliError> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true).append(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let file = options.open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                CliError::usage(format!(
                    "{} exists: it may hold writes to undo (`licensing probe --finish {0}`); \
                     name another with --ledger",
                    path.display()
                ))
            } else {
                failed(path, &e)
            }
        })?;
        lock(&file, path)?;
        let mut ledger = Ledger {
            path: path.to_path_buf(),
            file,
            run: run.clone(),
            entries: BTreeMap::new(),
        };
        let line = serde_json::to_string(&Header { ledger: run }).expect("JSON");
        ledger.line(&line)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(dir) = File::open(dir)
        {
            let _ = dir.sync_all();
        }
        Ok(ledger)
    }

    /// An existing ledger, read back (see the module's rules) and held for appending.
    pub fn open(path: &Path) -> Result<Self, CliError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| failed(path, &e))?;
        lock(&file, path)?;
        let text = std::fs::read(path).map_err(|e| failed(path, &e))?;
        let (run, records) = parse(path, &text)?;
        let mut ledger = Ledger {
            path: path.to_path_buf(),
            file,
            run,
            entries: BTreeMap::new(),
        };
        for record in records {
            ledger.take(record);
        }
        Ok(ledger)
    }

    /// The ledger's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many writes it announced.
    pub fn writes(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Appends a record and waits until it is on disk.
    pub fn append(&mut self, record: Record) -> Result<(), CliError> {
        let line = serde_json::to_string(&record).expect("JSON");
        self.line(&line)?;
        self.take(record);
        Ok(())
    }

    /// Announces a write; its number.
    pub fn intent(&mut self, write: Write) -> Result<u64, CliError> {
        let seq = self.entries.keys().next_back().map_or(1, |s| s + 1);
        self.append(Record::Intent { seq, write })?;
        Ok(seq)
    }

    fn line(&mut self, line: &str) -> Result<(), CliError> {
        let path = self.path.clone();
        self.file
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| failed(&path, &e))
    }

    fn take(&mut self, record: Record) {
        let seq = record.seq();
        match record {
            Record::Intent { write, .. } => {
                self.entries.insert(
                    seq,
                    Entry {
                        write,
                        written: None,
                        member: None,
                        undoing: false,
                        undone: None,
                    },
                );
            }
            Record::Written { result, member, .. } => {
                if let Some(e) = self.entries.get_mut(&seq) {
                    e.written = Some(result);
                    e.member = member.or(e.member.take());
                }
            }
            Record::Undoing { .. } => {
                if let Some(e) = self.entries.get_mut(&seq) {
                    e.undoing = true;
                }
            }
            Record::Undone { result, .. } => {
                if let Some(e) = self.entries.get_mut(&seq) {
                    e.undone = Some(result);
                }
            }
        }
    }
}

#[cfg(unix)]
fn lock(file: &File, path: &Path) -> Result<(), CliError> {
    use rustix::fs::{FlockOperation, flock};
    flock(file, FlockOperation::NonBlockingLockExclusive).map_err(|e| {
        if e == rustix::io::Errno::WOULDBLOCK {
            CliError::usage(format!(
                "{} is held by another run of `licensing probe`: wait for it to end",
                path.display()
            ))
        } else {
            CliError::usage(format!("cannot lock {}: {e}", path.display()))
        }
    })
}

#[cfg(not(unix))]
fn lock(_: &File, _: &Path) -> Result<(), CliError> {
    Ok(())
}

/// The most a ledger may hold: a run writes a few dozen lines.
const MAX_LEDGER_BYTES: usize = 16 * 1024 * 1024;

/// A ledger's run and records; a torn last line is left out, a damaged line before it
/// refuses the ledger.
fn parse(path: &Path, text: &[u8]) -> Result<(Run, Vec<Record>), CliError> {
    if text.len() > MAX_LEDGER_BYTES {
        return Err(CliError::usage(format!(
            "{}: larger than a ledger can be ({MAX_LEDGER_BYTES} bytes)",
            path.display()
        )));
    }
    let mut lines = text.split_inclusive(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let header: Header = serde_json::from_slice(first).map_err(|e| {
        CliError::usage(format!(
            "{}: not a ledger of `licensing probe` (its first line: {e})",
            path.display()
        ))
    })?;
    let mut records = Vec::new();
    let lines: Vec<&[u8]> = lines.collect();
    for (i, line) in lines.iter().enumerate() {
        let whole = line.ends_with(b"\n");
        match serde_json::from_slice::<Record>(line) {
            Ok(record) if whole => records.push(record),
            // Cut short by a stop in mid-write: never synced, so its request never left.
            _ if !whole && i + 1 == lines.len() => {}
            Ok(_) => {}
            Err(e) => {
                return Err(CliError::usage(format!(
                    "{}: line {} is damaged ({e}); nothing was sent",
                    path.display(),
                    i + 2
                )));
            }
        }
    }
    Ok((header.ledger, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Run {
        Run {
            version: 1,
            order_url: "http://o".into(),
            member_url: "http://m".into(),
            inputs: Inputs {
                enterprises: vec!["EG-1".into()],
                ..Inputs::default()
            },
            max_writes: 3,
        }
    }

    #[test]
    fn a_ledger_reads_back_as_written_and_a_torn_last_line_is_no_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.jsonl");
        let mut ledger = Ledger::create(&path, run()).unwrap();
        assert!(
            Ledger::create(&path, run())
                .unwrap_err()
                .message
                .contains("exists")
        );
        let seq = ledger
            .intent(Write::AddMember {
                enterprise: "EG-1".into(),
                user_name: "probe1".into(),
            })
            .unwrap();
        ledger
            .append(Record::Written {
                seq,
                result: "applied".into(),
                member: Some("MG-9".into()),
            })
            .unwrap();
        ledger.append(Record::Undoing { seq }).unwrap();
        // Held: a second run is refused while this one is open.
        assert!(
            Ledger::open(&path)
                .unwrap_err()
                .message
                .contains("held by another run")
        );
        drop(ledger);
        let mut text = std::fs::read(&path).unwrap();
        text.extend_from_slice(b"{\"event\":\"undone\",\"seq\":1,\"res");
        std::fs::write(&path, &text).unwrap();
        let back = Ledger::open(&path).unwrap();
        assert_eq!(back.run, run());
        let entry = &back.entries[&1];
        assert_eq!(entry.member.as_deref(), Some("MG-9"));
        assert!(entry.undoing && entry.undone.is_none() && entry.open());
        drop(back);
        // A damaged line before the last refuses the ledger.
        let mut text = std::fs::read(&path).unwrap();
        text.extend_from_slice(b"\n{\"event\":\"undone\",\"seq\":1,\"result\":\"applied\"}\n");
        std::fs::write(&path, &text).unwrap();
        let error = Ledger::open(&path).unwrap_err().message;
        assert!(error.contains("line 5 is damaged"), "{error}");
    }
}
