//! A stateful, in-memory simulator of both services, for tests, examples and contract
//! testing.
//!
//! It serves the order service (`/order/api/order/v1/…`) and the member center
//! (`/me/api/v1/…`) on one address, speaks the platform's protocol (HTTP 200 with
//! `code: 0` on success, HTTP 299 with a string `code` on a business exception), checks
//! the credentials and the `g_nonce` of every request, and keeps enterprises, customers,
//! orders, assets, employees and loans in memory while it runs. The rules it applies, and
//! what it chose where the platform's documents are silent, are listed in its manual
//! ([`guide`]).
//!
//! It serves plain HTTP unless given a certificate and key ([`SimulatorBuilder::tls`]):
//! then HTTPS, HTTP/1.1 or HTTP/2 as the client's ALPN asks, and [`Simulator::url`] starts
//! with `https://`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use licensing_sdk::order;
//! use licensing_sim::Simulator;
//!
//! let sim = Simulator::start().await?;
//! let client = order::Client::builder(&sim.url())
//!     .application_token(licensing_sim::DEFAULT_APP_TOKEN)
//!     .build()?;
//! let numbers = client
//!     .allocate_shell_nums()
//!     .body(order::types::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
//!     .await?;
//! assert_eq!(numbers[0].len(), 10);
//! sim.shutdown().await?;
//! # Ok(()) }
//! ```

mod builder;
#[cfg(feature = "console")]
mod console;
mod ops;
mod protocol;
mod sandbox;
mod state;
mod store;
mod tenants;

pub use builder::{SimulatorBuilder, StateWriteFaults};
/// The server layer the simulator is served on, from its own package (`licensing-host`):
/// for another program to be served on the same accept loop, admin checks and console
/// frame.
#[doc(inline)]
pub use licensing_host as host;
#[doc(inline)]
pub use sandbox::client as admin;

use std::{io, net::SocketAddr, ops::RangeInclusive, sync::Arc, time::Duration};

use licensing_host::server;
use tokio::{sync::oneshot, task::JoinHandle};

#[cfg(feature = "tls")]
pub use licensing_host::TlsConfig;
pub use licensing_host::{
    DEFAULT_BODY_BUDGET, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_REPLY_BUDGET, DEFAULT_WRITE_TIMEOUT, ServerStats,
};
pub use ops::{DEFAULT_MAX_ENTERPRISES, DEFAULT_MAX_MEMBERS, DEFAULT_MAX_ORDERS};
pub use protocol::DEFAULT_MAX_STRING_BYTES;
pub use sandbox::{
    DEFAULT_MAX_IMPORT_BYTES, DEFAULT_MAX_SEED_BYTES, DEFAULT_MAX_SEED_RECORDS,
    PREFIX as ADMIN_PREFIX,
    clock::Clock,
    faults::{FaultSettings, Faults},
    journal::{DEFAULT_JOURNAL_BYTES, DEFAULT_JOURNAL_CAPACITY},
};
pub use state::{ParseRegionError, Region, document::ImportError};
pub use store::StateFileError;
pub use tenants::{
    DEFAULT_MAX_TENANTS, DEFAULT_TENANT_TTL, MAX_TENANT_TTL, Tenant, TenantError, TenantOptions,
};

use ops::Db;
use sandbox::Sandbox;

// The tokens the services accept unless configured otherwise, from the sandbox client:
// programs that reach a simulator in another process need them too.
pub use licensing_sandbox_client::{DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN};

/// Accepted password lengths unless configured otherwise (error `50003` outside).
pub const DEFAULT_PASSWORD_LENGTH: RangeInclusive<usize> = 6..=32;
/// Trial member accounts an enterprise may hold unless configured otherwise (error `60009`).
pub const DEFAULT_TRIAL_MEMBER_LIMIT: usize = 1000;
/// How long a `g_nonce` is remembered unless configured otherwise.
pub const DEFAULT_NONCE_WINDOW: Duration = Duration::from_secs(300);
/// How many `g_nonce`s are remembered at most unless configured otherwise.
pub const DEFAULT_NONCE_CAPACITY: usize = 200_000;
/// The size the state file's log may reach before it is compacted, unless configured
/// otherwise (it also waits until the log is larger than the snapshot).
pub const DEFAULT_STATE_LOG_LIMIT: u64 = 64 * 1024 * 1024;

/// A running simulator; stopped by [`Simulator::shutdown`] or when dropped.
#[derive(Debug)]
pub struct Simulator {
    addr: SocketAddr,
    tls: bool,
    db: Arc<Db>,
    sandbox: Arc<Sandbox>,
    clock: Clock,
    registry: Arc<tenants::Registry>,
    admin_token: Option<String>,
    server: Arc<server::Server>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
    /// Removes tenants left idle past their time to live.
    reaper: Option<JoinHandle<()>>,
}

impl Simulator {
    /// Starts a simulator with the default configuration on an ephemeral port of
    /// `127.0.0.1`.
    pub async fn start() -> io::Result<Self> {
        SimulatorBuilder::default().start().await
    }

    /// A builder for a simulator with a non-default configuration.
    pub fn builder() -> SimulatorBuilder {
        SimulatorBuilder::default()
    }

    /// The base URL to give the SDK's client builders, e.g. `http://127.0.0.1:41234`, or
    /// `https://127.0.0.1:41234` when serving HTTPS (a client must then trust the
    /// certificate, and it must name the host the client connects to).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Whether it serves HTTPS ([`SimulatorBuilder::tls`]).
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The address the simulator listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A client of the admin API (`spec/sandbox.yaml`: reset, state, seeds, journal,
    /// scripted faults, clock) for this simulator, with its admin token when it has one.
    /// Over HTTPS the client must trust the simulator's certificate: build one with
    /// [`admin::client_with`] instead.
    pub fn admin(&self) -> admin::Client {
        admin::client(&self.url(), self.admin_token.as_deref())
            .expect("a client for the simulator's own address")
    }

    /// What the server's limits have done so far: connections open, refused, evicted and
    /// timed out, the bytes of request bodies held now and at most
    /// ([`SimulatorBuilder::body_budget`]), and those of replies
    /// ([`SimulatorBuilder::reply_budget`]).
    pub fn stats(&self) -> ServerStats {
        self.server.stats()
    }

    /// Fault injection, adjustable while the simulator runs.
    pub fn faults(&self) -> &Faults {
        &self.sandbox.faults
    }

    /// The simulator's clock: every time it writes (creation, update and assignment
    /// times) is read from it. It starts as the machine's clock and can be set, advanced
    /// and frozen while the simulator runs; see [`Clock`].
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The region marker of asset numbers allocated from now on.
    pub fn region(&self) -> Region {
        self.db.region()
    }

    /// Switches the region marker of asset numbers allocated from now on. Each region
    /// keeps its own sequence, so no number is ever handed out twice.
    pub fn set_region(&self, region: Region) {
        if let Err(e) = self.db.set_region(region) {
            tracing::error!(error = %e, "the region change cannot be recorded: not applied");
        }
    }

    /// The whole simulator state as one JSON document: every enterprise, customer, order,
    /// asset, employee (with its password, as the simulator keeps it) and loan, the asset
    /// number allocator and the clock. [`Simulator::import_state`] reads it back, into this
    /// simulator or another one:
    ///
    /// ```json
    /// {"version": 1, "clock": {"mode": "running", "offsetMs": 0},
    ///  "allocator": {"region": "domestic", "last": {"domestic": 2, "singapore": 0}},
    ///  "state": {"sequence": 9, "enterprises": {…}, "customers": {…}, "orders": {…},
    ///            "assets": {…}, "revoked": […], "members": {…}, "loans": {…}}}
    /// ```
    ///
    /// Records are keyed and sorted by id, so the same state always exports the same
    /// document. Configuration (tokens, limits, faults) and remembered `g_nonce`s are not
    /// part of it.
    pub fn export_state(&self) -> serde_json::Value {
        self.db.export_state()
    }

    /// Replaces the whole state by a document [`Simulator::export_state`] wrote (omitted
    /// parts are empty). The document is read and checked completely first: a field of
    /// the wrong shape, a broken rule (two enterprises of one name, an id above the id
    /// counter) or a reference that leads nowhere (an asset of an unknown customer, a loan
    /// of an unknown employee) is refused with the field's JSON path, and nothing changes.
    /// Requests see the old state or the new one, never a mix.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use licensing_sim::Simulator;
    ///
    /// let (a, b) = (Simulator::start().await?, Simulator::start().await?);
    /// b.import_state(a.export_state())?;
    /// let broken = serde_json::json!({"version": 1, "state": {"sequence": "nine"}});
    /// let error = b.import_state(broken).unwrap_err();
    /// assert!(error.to_string().starts_with("state.sequence: invalid type"));
    /// # Ok(()) }
    /// ```
    pub fn import_state(&self, state: serde_json::Value) -> Result<(), ImportError> {
        self.db.import_state(state)
    }

    /// Forgets everything the simulator holds: every record, the numbers handed out (the
    /// region stays) and any clock setting, as if it had just started. With a state file
    /// the empty state is written first; an error means it could not be, and nothing
    /// changed.
    pub fn reset(&self) -> io::Result<()> {
        self.db.reset()
    }

    /// Removes one enterprise with its customers, their orders, its assets (their
    /// numbers are never sold again, as after a revocation), its employees and their
    /// loans, leaving no reference to any of them. Returns whether the enterprise existed.
    /// With a state file an error means the removal (made in memory) could not be written;
    /// the simulator then refuses changes until it can write its state again.
    pub fn reset_enterprise(&self, global_id: &str) -> io::Result<bool> {
        self.db.reset_enterprise(global_id)
    }

    /// Creates a tenant: a sandbox of its own in this simulator — state and ids, clock,
    /// `g_nonce` window, fault rules and settings, journal — served under its base URL
    /// ([`Tenant::url`], `/t/{id}` after [`Simulator::url`]) to its own tokens only. The
    /// un-prefixed paths stay the default tenant's, this simulator's own. With a
    /// [state file](SimulatorBuilder::state_file) it is on disk before it is returned, and
    /// comes back at every start until deleted. See [`Simulator::tenant_with`] for a
    /// seed, a region, a name or a time to live.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use licensing_sdk::member;
    ///
    /// let sim = licensing_sim::Simulator::start().await?;
    /// let tenant = sim.tenant()?;
    /// let members = member::Client::builder(tenant.url())
    ///     .client_token(tenant.client_token())
    ///     .user_token(tenant.user_token())
    ///     .build()?;
    /// sim.delete_tenant(tenant.id())?;
    /// # Ok(()) }
    /// ```
    pub fn tenant(&self) -> Result<Tenant, TenantError> {
        self.tenant_with(TenantOptions::new())
    }

    /// As [`Simulator::tenant`], with a seed, a region, a name or a time to live.
    pub fn tenant_with(&self, options: TenantOptions) -> Result<Tenant, TenantError> {
        let (entry, seeded) = self.registry.create(options)?;
        Ok(Tenant::new(&self.url(), &entry, seeded))
    }

    /// Deletes a tenant with everything it holds (its files too, with a state file);
    /// whether there was one. Its prefix answers `404` from then on.
    pub fn delete_tenant(&self, id: &str) -> io::Result<bool> {
        self.registry.delete(id)
    }

    /// How many tenants it holds now, those idle past their time to live and not yet
    /// removed included (they are removed as their time comes, by a task of the
    /// simulator's, or when a request names them).
    pub fn tenant_count(&self) -> usize {
        self.registry.count()
    }

    /// The ids of the live tenants, oldest first (those idle past their time to live are
    /// removed first).
    pub fn tenant_ids(&self) -> Vec<String> {
        self.registry
            .list()
            .iter()
            .map(|entry| entry.id.clone())
            .collect()
    }

    /// Tells the server to stop, once; and, when `LICENSING_SIM_JOURNAL_DIR` names a
    /// directory, writes the journal there first (see [`JOURNAL_DIR_VARIABLE`]): an error
    /// says it could not be (the server stops all the same).
    fn stop(&mut self) -> io::Result<()> {
        let Some(stop) = self.stop.take() else {
            return Ok(());
        };
        let written = self.export_journal();
        let _ = stop.send(());
        if let Some(reaper) = self.reaper.take() {
            reaper.abort();
        }
        written
    }

    fn export_journal(&self) -> io::Result<()> {
        let Some(dir) = std::env::var_os(JOURNAL_DIR_VARIABLE).filter(|d| !d.is_empty()) else {
            return Ok(());
        };
        // Each tenant's journal in a file of its own, as each simulator's is.
        let tenants = self.registry.list();
        let journals = std::iter::once(&self.sandbox.journal)
            .chain(tenants.iter().map(|t| &t.unit.sandbox.journal));
        for journal in journals {
            let listing = journal.listing(&sandbox::journal::Filter::default());
            if !listing.is_empty() {
                let dir = std::path::Path::new(&dir);
                sandbox::journal::export::write(dir, self.addr.port(), &listing)?;
            }
        }
        Ok(())
    }

    /// Stops accepting connections, lets requests in flight finish (for up to five
    /// seconds) and returns once the server has stopped. With
    /// [`JOURNAL_DIR_VARIABLE`] set, an error may also be the journal's, naming the
    /// path it could not be written to.
    pub async fn shutdown(mut self) -> io::Result<()> {
        let written = self.stop();
        let Some(mut task) = self.task.take() else {
            return written;
        };
        let stopped = match tokio::time::timeout(Duration::from_secs(5), &mut task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(io::Error::other(join)),
            Err(_) => {
                // A client holding a connection open must not keep the caller waiting.
                task.abort();
                Ok(())
            }
        };
        stopped.and(written)
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        // Drop cannot return it: the one place left to say it.
        if let Err(e) = self.stop() {
            eprintln!("licensing-sim: {e}");
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The environment variable naming a directory (made if missing) where every simulator of
/// the process writes its journal when it stops or is dropped, if it journaled anything:
/// for measuring what a test suite exercised (`licensing-proxy coverage DIR/*.json`).
///
/// Each journal is a new file `journal-PID-RANDOM-PORT.json` (`RANDOM`: 16 hexadecimal
/// digits from the operating system's random source, so no one can know the name before
/// the simulator picks it), in the admin API's `GET /journal` shape, readable by its owner
/// only (mode `0600`). It is written under a temporary name that must not exist
/// (`.journal-….json.tmp`, never a link followed) and renamed into place once complete.
/// A journal that cannot be written is an error naming the path:
/// [`Simulator::shutdown`] returns it, a simulator dropped prints it on stderr (one line,
/// `licensing-sim: …`), and the `licensing-sim` binary prints it and exits with a failure.
/// An empty value is as if the variable were not set.
pub const JOURNAL_DIR_VARIABLE: &str = "LICENSING_SIM_JOURNAL_DIR";

/// The simulator's manual (its README): the command line, the rules it applies, its
/// protocol checks and limits, and what it chose where the platform's documents are
/// silent. Its Rust examples are compiled as doctests.
#[doc = include_str!("../README.md")]
pub mod guide {}
