//! The tenants' files beside a state file `STATE`: a directory `STATE.tenants/`, and in it
//! one directory per tenant, named by its id, holding its registration (`tenant.json`:
//! name, tokens, time to live, creation time) and its own state file (`state.json`, with
//! `state.json.log` and `state.json.lock`, exactly as the default tenant's `STATE`).
//!
//! A tenant exists on disk while its registration does: it is written (whole, synced) last
//! when a tenant is created, and removed first when it is deleted. A directory without
//! one is what a creation or deletion cut short left, never acknowledged as a tenant: it is
//! removed at the next start.

use std::{
    fs, io,
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use serde::{Deserialize, Serialize};

use super::{Entry, Tokens, Unit, is_id};
use crate::store::{
    StateFileError,
    files::{replace_file, sibling, sync_dir},
};

const REGISTRATION: &str = "tenant.json";
/// The version of the registration this simulator writes and reads.
const VERSION: u32 = 1;

/// `STATE.tenants`.
pub(super) fn root(state_file: &Path) -> PathBuf {
    sibling(state_file, ".tenants")
}

/// A tenant's state file in its directory.
pub(super) fn state_file(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

/// Makes the directory of tenant `id` (and `root`), readable by the owner only: the
/// files in it hold the tenant's tokens and its employees' passwords.
pub(super) fn prepare(root: &Path, id: &str) -> io::Result<PathBuf> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(root)?;
    let dir = root.join(id);
    builder.recursive(false).create(&dir)?;
    sync_dir(&dir)?;
    Ok(dir)
}

/// What `tenant.json` holds.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Registration {
    version: u32,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    pub tokens: Tokens,
    ttl_secs: u64,
    created_at: i64,
}

impl Registration {
    pub fn of(entry: &Entry) -> Self {
        Self {
            version: VERSION,
            id: entry.id.clone(),
            name: entry.name.clone(),
            tokens: entry.tokens.clone(),
            ttl_secs: entry.ttl.as_secs(),
            created_at: entry.created_at,
        }
    }

    /// The live tenant it stands for, over `unit`, idle from `now`.
    pub fn into_entry(self, unit: Unit, dir: PathBuf, now: u64, order: &AtomicU64) -> Entry {
        Entry {
            id: self.id,
            name: self.name,
            tokens: self.tokens,
            ttl: Duration::from_secs(self.ttl_secs),
            created_at: self.created_at,
            unit,
            order: order.fetch_add(1, Ordering::Relaxed),
            used: AtomicU64::new(now),
            dir: Some(dir),
        }
    }
}

/// Writes the registration in `dir`, whole or not at all: from then on the tenant comes
/// back at every start.
pub(super) fn register(dir: &Path, registration: &Registration) -> io::Result<()> {
    let bytes = serde_json::to_vec_pretty(registration)?;
    replace_file(&dir.join(REGISTRATION), &bytes).map(drop)
}

/// Removes the registration in `dir`, durably: from then on the tenant does not come back.
pub(super) fn unregister(dir: &Path) -> io::Result<()> {
    match fs::remove_file(dir.join(REGISTRATION)) {
        Ok(()) => sync_dir(&dir.join(REGISTRATION)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes a tenant's directory with what is left in it.
pub(super) fn remove(dir: &Path) -> io::Result<()> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        done => done,
    }
}

/// The registered tenants under `root`, by their directories; directories without a
/// registration are removed. A registration that cannot be read or is not one stops the
/// start, naming the file.
pub(super) fn found(root: &Path) -> Result<Vec<(PathBuf, Registration)>, StateFileError> {
    let listing = match fs::read_dir(root) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StateFileError::new(root, format!("cannot be read: {e}"))),
    };
    let mut found = Vec::new();
    for item in listing {
        let item = item.map_err(|e| StateFileError::new(root, format!("cannot be read: {e}")))?;
        let dir = item.path();
        let name = item.file_name();
        let Some(id) = name.to_str().filter(|n| is_id(n) && dir.is_dir()) else {
            tracing::warn!(file = %dir.display(), "not a tenant's directory: left alone");
            continue;
        };
        let path = dir.join(REGISTRATION);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tracing::info!(dir = %dir.display(), "removing a tenant's directory without its registration");
                remove(&dir)
                    .map_err(|e| StateFileError::new(&dir, format!("cannot be removed: {e}")))?;
                continue;
            }
            Err(e) => return Err(StateFileError::new(&path, format!("cannot be read: {e}"))),
        };
        let registration: Registration = serde_json::from_slice(&bytes)
            .map_err(|e| StateFileError::new(&path, format!("not a tenant's registration: {e}")))?;
        if registration.version != VERSION || registration.id != id {
            return Err(StateFileError::new(
                &path,
                format!(
                    "not the registration of tenant {id} in version {VERSION} (it says tenant \
                     {:?}, version {})",
                    registration.id, registration.version
                ),
            ));
        }
        found.push((dir, registration));
    }
    found.sort_by(|(_, a), (_, b)| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(found)
}
