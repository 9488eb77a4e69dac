//! The simulator's state as one JSON document: export, import (checked, all or nothing),
//! and resets.

use std::{fmt, io};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Shared,
    clock::Setting,
    state::{Allocator, Invalid, Region, State},
};

/// The version of the exported document this simulator writes and reads.
pub(crate) const VERSION: u32 = 1;

/// The document [`Shared::export_state`] writes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DocumentRef<'a> {
    version: u32,
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
    /// The new state could not be made durable.
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
pub(crate) fn read_document(doc: Value) -> Result<Loaded, Invalid> {
    match doc.get("version") {
        Some(v) if v.as_u64() == Some(u64::from(VERSION)) => {}
        Some(v) => {
            return Err(Invalid::new(
                "version",
                format!("unsupported version {v} (this simulator reads version {VERSION})"),
            ));
        }
        None if doc.is_object() => return Err(Invalid::new("", "missing field `version`")),
        None => return Err(Invalid::new("", "the state must be a JSON object")),
    }
    let document: Document = serde_path_to_error::deserialize(doc).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        Invalid::new(path, e.into_inner().to_string())
    })?;
    finish(document)
}

fn finish(document: Document) -> Result<Loaded, Invalid> {
    let Document {
        clock,
        allocator,
        mut state,
        ..
    } = document;
    allocator.check()?;
    state.reindex(&allocator)?;
    Ok(Loaded {
        state,
        allocator,
        clock,
    })
}

impl Shared {
    /// The whole simulator state (records, allocator, clock) as one document.
    pub fn export_state(&self) -> Value {
        let state = self.state();
        let allocator = self.allocator();
        serde_json::to_value(DocumentRef {
            version: VERSION,
            clock: self.clock.setting(),
            allocator: &allocator,
            state: &state,
        })
        .expect("the state serialises: string keys, no non-finite numbers")
    }

    /// Replaces the whole state by a document [`Shared::export_state`] wrote, or refuses
    /// it with nothing changed.
    pub fn import_state(&self, doc: Value) -> Result<(), ImportError> {
        let loaded = read_document(doc).map_err(ImportError::invalid)?;
        self.replace(loaded);
        Ok(())
    }

    /// Forgets every record, resets the allocator (the region stays) and the clock.
    pub fn reset(&self) -> io::Result<()> {
        let region = self.allocator().region();
        self.replace(Loaded {
            state: State::default(),
            allocator: Allocator::new(region),
            clock: Setting::default(),
        });
        Ok(())
    }

    /// Removes an enterprise with everything of it; whether there was one.
    pub fn reset_enterprise(&self, global_id: &str) -> io::Result<bool> {
        Ok(self.state_mut().remove_enterprise(global_id))
    }

    /// Swaps in a checked state: the state lock first, as the handlers take it, so none
    /// sees the new state with the old allocator.
    fn replace(&self, loaded: Loaded) {
        let mut state = self.state_mut();
        let mut allocator = self.allocator();
        *state = loaded.state;
        *allocator = loaded.allocator;
        self.clock.restore(loaded.clock);
    }
}
