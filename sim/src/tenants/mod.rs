//! Tenants: sandboxes of their own inside one simulator, for parallel test workers and
//! for a team sharing one. Each is a [`Unit`] — state and ids, clock, allocator, journal,
//! fault rules and settings, `g_nonce` window, credentials — served under `/t/{id}`
//! ([`Router`]); the simulator's own unit, the default tenant, keeps the un-prefixed
//! paths. The registry creates, finds, lists and removes them, removes those left idle
//! past their time to live, and with a state file keeps each in files of its own
//! ([`files`]).

mod api;
mod files;
mod handle;
#[cfg(feature = "console")]
mod picker;
mod route;
mod unit;

use std::{
    collections::HashMap,
    io,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, PoisonError, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use licensing_host::admin::AdminAccess;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

pub use handle::{Tenant, TenantError, TenantOptions};
pub(crate) use route::Router;
pub(crate) use unit::{Console, Template, Unit};

use crate::{
    ops::{Db, Loaded, OpenOptions},
    protocol::Credentials,
    sandbox::{client::types::SeedResult, seed},
    store::StateFileError,
};

/// How many tenants a simulator holds at once unless configured otherwise.
pub const DEFAULT_MAX_TENANTS: usize = 100;
/// How long a tenant no request reaches is kept, unless its creation or the simulator's
/// configuration says otherwise.
pub const DEFAULT_TENANT_TTL: Duration = Duration::from_secs(60 * 60);
/// The longest time to live a tenant may be given: 30 days.
pub const MAX_TENANT_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// The random bytes of a tenant's id and of each of its tokens: 128 bits.
const RANDOM_BYTES: usize = 16;

/// 128 bits from the operating system's random source, as 32 lowercase hex digits.
fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; RANDOM_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The path tenant `id` is served under.
pub(crate) fn prefix(id: &str) -> String {
    format!("/t/{id}")
}

/// Whether `id` has the shape of a tenant's id: 32 lowercase hex digits. Anything else
/// (`..`, an encoded slash, an empty segment) names no tenant and is looked up nowhere.
pub(crate) fn is_id(id: &str) -> bool {
    id.len() == 2 * RANDOM_BYTES && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A tenant's credentials, accepted under its prefix only.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tokens {
    pub app: String,
    pub client: String,
    pub user: String,
    pub admin: String,
}

/// Tokens stay out of logs, as the SDK keeps its own.
impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens([REDACTED])")
    }
}

impl Tokens {
    fn random() -> io::Result<Self> {
        Ok(Self {
            app: format!("sim-app-{}", random_hex()?),
            client: format!("sim-client-{}", random_hex()?),
            user: format!("sim-user-{}", random_hex()?),
            admin: format!("sim-admin-{}", random_hex()?),
        })
    }

    fn credentials(&self) -> Credentials {
        Credentials {
            app_token: self.app.clone(),
            client_token: self.client.clone(),
            user_token: self.user.clone(),
        }
    }
}

/// One live tenant.
#[derive(Debug)]
pub(crate) struct Entry {
    pub id: String,
    pub name: Option<String>,
    pub tokens: Tokens,
    pub ttl: Duration,
    /// When it was created, by the machine's clock (ms since the Unix epoch).
    pub created_at: i64,
    pub unit: Unit,
    /// Creation order, for lists.
    order: u64,
    /// When a request last reached it, in ms after the registry's `base`.
    used: AtomicU64,
    /// Its files, with a state file.
    dir: Option<PathBuf>,
}

impl Entry {
    fn deadline(&self) -> u64 {
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        self.used.load(Ordering::Relaxed).saturating_add(ttl)
    }
}

/// With a state file: where the tenants' files are, and what their logs are opened with.
#[derive(Clone, Debug)]
pub(crate) struct Durable {
    /// `STATE.tenants`, beside the state file.
    pub root: PathBuf,
    pub log_limit: u64,
}

/// The tenants of one simulator.
#[derive(Debug)]
pub(crate) struct Registry {
    entries: RwLock<HashMap<String, Arc<Entry>>>,
    /// Tenants being created, counted against `max` until they are entries.
    creating: Mutex<usize>,
    /// Removals (and the files they delete) one at a time.
    removing: Mutex<()>,
    pub max: usize,
    default_ttl: Duration,
    /// Each tenant's share of the simulator's bounds.
    template: Template,
    /// The listener's admin checks; each tenant's carry its own token.
    access: AdminAccess,
    durable: Option<Durable>,
    /// What idle times are measured from: tokio's clock, which tests can pause.
    base: Instant,
    next_order: AtomicU64,
    /// Wakes the task that removes idle tenants when one is added.
    pub wake: Arc<tokio::sync::Notify>,
}

/// Locks ignore poisoning: a panicked request cannot leave the map half-changed.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A place taken among the tenants while one is created; given back when dropped.
struct Reservation<'r>(&'r Registry);

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        *lock(&self.0.creating) -= 1;
    }
}

impl Registry {
    pub fn new(
        template: &Template,
        max: usize,
        default_ttl: Duration,
        access: AdminAccess,
        durable: Option<Durable>,
    ) -> Self {
        Self {
            entries: RwLock::default(),
            creating: Mutex::new(0),
            removing: Mutex::new(()),
            max,
            default_ttl: default_ttl.clamp(Duration::from_secs(1), MAX_TENANT_TTL),
            template: template.share(max),
            access,
            durable,
            base: Instant::now(),
            next_order: AtomicU64::new(0),
            wake: Arc::default(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn entries(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Arc<Entry>>> {
        self.entries.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live tenant `id`, its idle time restarted; `None` for an id of no tenant, or
    /// of one idle past its time to live (removed now).
    pub fn get(&self, id: &str) -> Option<Arc<Entry>> {
        if !is_id(id) {
            return None;
        }
        let entry = self.entries().get(id).cloned()?;
        let now = self.now();
        if entry.deadline() <= now {
            self.remove_idle(id);
            return None;
        }
        entry.used.fetch_max(now, Ordering::Relaxed);
        Some(entry)
    }

    /// The live tenants, oldest first, idle ones removed first.
    pub fn list(&self) -> Vec<Arc<Entry>> {
        self.reap();
        let mut all: Vec<Arc<Entry>> = self.entries().values().cloned().collect();
        all.sort_by_key(|e| e.order);
        all
    }

    /// How many tenants are held now, idle ones not yet removed included.
    pub fn count(&self) -> usize {
        self.entries().len()
    }

    /// Milliseconds since a request last reached `entry`.
    pub fn idle_ms(&self, entry: &Entry) -> u64 {
        self.now()
            .saturating_sub(entry.used.load(Ordering::Relaxed))
    }

    /// Removes every tenant idle past its time to live; returns how long until the next
    /// one would be, if any tenant is left.
    pub fn reap(&self) -> Option<Duration> {
        let now = self.now();
        let mut idle = Vec::new();
        let mut next = None::<u64>;
        for (id, entry) in self.entries().iter() {
            let deadline = entry.deadline();
            if deadline <= now {
                idle.push(id.clone());
            } else {
                next = Some(next.map_or(deadline - now, |n| n.min(deadline - now)));
            }
        }
        for id in idle {
            self.remove_idle(&id);
        }
        next.map(Duration::from_millis)
    }

    fn remove_idle(&self, id: &str) {
        match self.remove(id, true) {
            Ok(true) => tracing::info!(
                tenant = id,
                "removed a tenant left idle past its time to live"
            ),
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(tenant = id, error = %e, "cannot remove an idle tenant's files")
            }
        }
    }

    /// Deletes tenant `id`; whether there was one. With a state file its registration is
    /// removed first: an error means it could not be, and the tenant is still there.
    pub fn delete(&self, id: &str) -> io::Result<bool> {
        if !is_id(id) {
            return Ok(false);
        }
        self.remove(id, false)
    }

    fn remove(&self, id: &str, only_idle: bool) -> io::Result<bool> {
        let _one_at_a_time = lock(&self.removing);
        let Some(entry) = self.entries().get(id).cloned() else {
            return Ok(false);
        };
        if only_idle && entry.deadline() > self.now() {
            return Ok(false);
        }
        if let Some(dir) = &entry.dir {
            files::unregister(dir)?;
        }
        self.entries
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(dir) = &entry.dir {
            // Unregistered, it does not come back; what is left is removed at the next
            // start if not now.
            if let Err(e) = files::remove(dir) {
                tracing::warn!(tenant = id, error = %e, "cannot remove a deleted tenant's files");
            }
        }
        // Its memory goes with the last request still holding it.
        Ok(true)
    }

    fn reserve(&self) -> Result<Reservation<'_>, TenantError> {
        let mut creating = lock(&self.creating);
        if self.entries().len() + *creating >= self.max {
            return Err(TenantError::Full { max: self.max });
        }
        *creating += 1;
        Ok(Reservation(self))
    }

    /// Creates a tenant (seeded when asked), durable before it is returned when the
    /// simulator has a state file; with what the seed made.
    pub fn create(
        &self,
        options: TenantOptions,
    ) -> Result<(Arc<Entry>, Option<SeedResult>), TenantError> {
        self.reap();
        let ttl = options.checked_ttl(self.default_ttl)?;
        let name = options.checked_name()?;
        let _place = self.reserve()?;
        let id = random_hex()?;
        let tokens = Tokens::random()?;
        let region = options.region.unwrap_or_default();
        let (db, dir) = match &self.durable {
            None => (
                Db::in_memory(self.template.settings.clone(), Loaded::fresh(region)),
                None,
            ),
            Some(durable) => {
                let dir = files::prepare(&durable.root, &id)?;
                let options = OpenOptions {
                    region: Some(region),
                    log_limit: durable.log_limit,
                    ..OpenOptions::default()
                };
                let opened = Db::open(
                    &files::state_file(&dir),
                    self.template.settings.clone(),
                    options,
                );
                match opened {
                    Ok(db) => (db, Some(dir)),
                    Err(e) => return Err(discard(Some(&dir), TenantError::Io(e.into()))),
                }
            }
        };
        let unit = self.unit(db, &id, &tokens);
        let seeded = match options.seed {
            Some(s) => Some(
                seed::load(&unit.db, s, &self.template.limits)
                    .map_err(|e| discard(dir.as_deref(), e.into()))?,
            ),
            None => None,
        };
        let entry = Entry {
            id,
            name,
            tokens,
            ttl,
            created_at: crate::state::clock::wall_ms(),
            unit,
            order: self.next_order.fetch_add(1, Ordering::Relaxed),
            used: AtomicU64::new(self.now()),
            dir,
        };
        if let Some(dir) = &entry.dir {
            files::register(dir, &files::Registration::of(&entry))
                .map_err(|e| discard(Some(dir), e.into()))?;
        }
        let entry = Arc::new(entry);
        self.entries
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(entry.id.clone(), Arc::clone(&entry));
        self.wake.notify_one();
        Ok((entry, seeded))
    }

    /// Tenant `id`'s sandbox over `db`, behind its own tokens, with its own console
    /// (and console sessions) under its prefix.
    fn unit(&self, db: Db, id: &str, tokens: &Tokens) -> Unit {
        let access = AdminAccess {
            token: Some(tokens.admin.clone()),
            sessions: Arc::default(),
            prefix: prefix(id),
            ..self.access.clone()
        };
        Unit::build(
            &self.template,
            db,
            tokens.credentials(),
            access,
            Vec::new(),
            Console::Tenant,
        )
    }

    /// Brings back every tenant a state file's directory holds, each from its own state
    /// file as the default tenant's is (a damaged log refused, or with `recover` kept up
    /// to its last whole change). Their idle time starts now.
    pub fn restore(&self, recover: bool) -> Result<usize, StateFileError> {
        let Some(durable) = &self.durable else {
            return Ok(0);
        };
        let found = files::found(&durable.root)?;
        let count = found.len();
        for (dir, registration) in found {
            let options = OpenOptions {
                region: None,
                log_limit: durable.log_limit,
                recover,
                ..OpenOptions::default()
            };
            let db = Db::open(
                &files::state_file(&dir),
                self.template.settings.clone(),
                options,
            )?;
            let unit = self.unit(db, &registration.id, &registration.tokens);
            let entry = registration.into_entry(unit, dir, self.now(), &self.next_order);
            self.entries
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(entry.id.clone(), Arc::new(entry));
        }
        Ok(count)
    }

    /// The admin routes that create, list, read and delete tenants, for the default
    /// tenant's admin API.
    pub fn routes(self: &Arc<Self>) -> Vec<licensing_host::pages::AdminRoute> {
        api::routes(self)
    }
}

/// What creating a tenant failed with, its files (if any) removed first.
fn discard(dir: Option<&Path>, e: TenantError) -> TenantError {
    if let Some(dir) = dir
        && let Err(removing) = files::remove(dir)
    {
        tracing::warn!(dir = %dir.display(), error = %removing, "cannot remove the files of a tenant not created");
    }
    e
}

/// Removes idle tenants while `registry` lives: wakes when the next one would be idle
/// past its time to live, or when a tenant is added.
pub(crate) async fn reap_idle(registry: std::sync::Weak<Registry>, wake: Arc<tokio::sync::Notify>) {
    loop {
        let Some(next) = registry.upgrade().map(|r| r.reap()) else {
            return;
        };
        let wait = next.unwrap_or(MAX_TENANT_TTL);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = wake.notified() => {}
        }
    }
}

/// The directory of the tenants' files beside a state file.
pub(crate) fn root_beside(state_file: &Path) -> PathBuf {
    files::root(state_file)
}
