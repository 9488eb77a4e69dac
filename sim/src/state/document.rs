//! The state as one JSON document: what an export writes, an import reads (checked,
//! all or nothing) and the state file's snapshot holds.

use std::{fmt, io};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Allocator, Invalid, Region, State, clock::Setting};

/// The version of the exported document this simulator writes and reads.
pub(crate) const VERSION: u32 = 1;

/// The document an export writes; the state file's snapshot adds `seq`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DocumentRef<'a> {
    pub version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    pub clock: Setting,
    pub allocator: &'a Allocator,
    pub state: &'a State,
}

/// The document an import reads; omitted parts are empty (a fresh clock,
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
    pub(crate) fn invalid(invalid: Invalid) -> Self {
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
pub(crate) fn read_document(doc: Value) -> Result<(Loaded, Option<u64>), Invalid> {
    check_version(doc.get("version"), doc.is_object())?;
    let document: Document = serde_path_to_error::deserialize(doc).map_err(located)?;
    finish(document)
}

/// The same from the bytes of a state file, without building a `Value` of it first.
pub(crate) fn read_snapshot(bytes: &[u8]) -> Result<(Loaded, Option<u64>), Invalid> {
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

/// Writes the document of a state, with the sequence number of the state file, straight
/// to `out`: a 50,000-asset state is a 40 MB document, which a `Vec` would hold whole (and
/// up to twice over while it grows).
pub(crate) fn write_snapshot(
    out: &mut dyn io::Write,
    seq: u64,
    clock: Setting,
    allocator: &Allocator,
    state: &State,
) -> io::Result<()> {
    serde_json::to_writer(
        out,
        &DocumentRef {
            version: VERSION,
            seq: Some(seq),
            clock,
            allocator,
            state,
        },
    )
    .map_err(io::Error::from)
}

/// The `seq` a state file's snapshot holds (0 for an exported document, which has none),
/// read without the rest of it; `None` when it is not a document at all.
pub(crate) fn snapshot_seq(bytes: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(default)]
        seq: Option<u64>,
    }
    serde_json::from_slice::<Peek>(bytes)
        .ok()
        .map(|p| p.seq.unwrap_or(0))
}
