//! A stateful, in-memory simulator of both services, for tests, examples and contract
//! testing.
//!
//! It serves the order service (`/order/api/order/v1/…`) and the member center
//! (`/me/api/v1/…`) on one address, speaks the platform's protocol (HTTP 200 with
//! `code: 0` on success, HTTP 299 with a string `code` on a business exception), checks
//! the credentials and the `g_nonce` of every request, and keeps enterprises, customers,
//! orders, assets, employees and loans in memory while it runs. The rules it applies, and
//! what it chose where the platform's documents are silent, are listed in the README
//! section "Simulator".
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

pub mod admin;
mod clock;
mod faults;
mod http;
mod member;
mod order;
mod persist;
mod routes;
mod sandbox;
mod server;
mod state;
mod tls;

use std::{
    io,
    net::{Ipv4Addr, SocketAddr},
    ops::RangeInclusive,
    path::PathBuf,
    sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
    time::Duration,
};

use tokio::{sync::oneshot, task::JoinHandle};

pub use clock::Clock;
pub use faults::{FaultSettings, Faults};
pub use persist::{ImportError, StateFileError};
pub use sandbox::{PREFIX as ADMIN_PREFIX, journal::DEFAULT_JOURNAL_CAPACITY};
pub use server::{
    DEFAULT_BODY_BUDGET, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, ServerStats,
};
pub use state::{ParseRegionError, Region};
pub use tls::TlsConfig;

/// The application token the order service accepts unless configured otherwise.
pub const DEFAULT_APP_TOKEN: &str = "sim-app-token";
/// The client token the member center accepts unless configured otherwise.
pub const DEFAULT_CLIENT_TOKEN: &str = "sim-client-token";
/// The user token the member center accepts unless configured otherwise.
pub const DEFAULT_USER_TOKEN: &str = "sim-user-token";

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

/// What a [`Simulator`] accepts and how it behaves; set through [`SimulatorBuilder`].
#[derive(Clone)]
pub(crate) struct Config {
    pub app_token: String,
    pub client_token: String,
    pub user_token: String,
    pub password_length: RangeInclusive<usize>,
    pub trial_member_limit: usize,
    pub nonce_window: Duration,
    pub nonce_capacity: usize,
    /// Required as `Authorization: Bearer …` on the admin API when set.
    pub admin_token: Option<String>,
    pub journal_capacity: usize,
}

/// Tokens stay out of logs, as the SDK keeps its own.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("tokens", &"[REDACTED]")
            .field("password_length", &self.password_length)
            .field("trial_member_limit", &self.trial_member_limit)
            .field("nonce_window", &self.nonce_window)
            .field("nonce_capacity", &self.nonce_capacity)
            .field("journal_capacity", &self.journal_capacity)
            .finish()
    }
}

/// Everything the request handlers share.
pub(crate) struct Shared {
    pub config: Config,
    state: RwLock<state::State>,
    pub allocator: Mutex<state::Allocator>,
    /// Every time the simulator writes comes from here.
    pub clock: Clock,
    pub nonces: Mutex<http::NonceWindow>,
    pub faults: Faults,
    pub journal: sandbox::journal::Journal,
    pub rules: sandbox::rules::Rules,
    /// Orders mutating calls and, with a state file, makes them durable.
    pub store: Arc<persist::Store>,
}

impl Shared {
    fn new(
        config: Config,
        faults: FaultSettings,
        loaded: persist::Loaded,
        log: Option<persist::Log>,
    ) -> Self {
        let store = Arc::new(persist::Store::new(log));
        Self {
            nonces: Mutex::new(http::NonceWindow::new(
                config.nonce_window,
                config.nonce_capacity,
            )),
            journal: sandbox::journal::Journal::new(config.journal_capacity),
            rules: sandbox::rules::Rules::default(),
            config,
            state: RwLock::new(loaded.state),
            allocator: Mutex::new(loaded.allocator),
            clock: Clock::new(loaded.clock, Arc::clone(&store)),
            faults: Faults::new(faults),
            store,
        }
    }

    /// The state it holds, to move elsewhere.
    fn into_loaded(self) -> persist::Loaded {
        persist::Loaded {
            clock: self.clock.setting(),
            state: self
                .state
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
            allocator: self
                .allocator
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// The state for reading. A handler that panicked cannot leave the state half-written
    /// in a way that matters more than losing the simulator, so poisoning is ignored.
    pub fn state(&self) -> RwLockReadGuard<'_, state::State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state for writing.
    pub fn state_mut(&self) -> RwLockWriteGuard<'_, state::State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The asset-number allocator.
    pub fn allocator(&self) -> std::sync::MutexGuard<'_, state::Allocator> {
        self.allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Configures and starts a [`Simulator`].
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use licensing_sim::{Region, Simulator};
///
/// let sim = Simulator::builder()
///     .region(Region::Singapore)
///     .password_length(8..=16)
///     .trial_member_limit(5)
///     .start()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use]
pub struct SimulatorBuilder {
    addr: SocketAddr,
    config: Config,
    /// `None`: the state file's, or domestic.
    region: Option<Region>,
    faults: FaultSettings,
    tls: Option<TlsConfig>,
    seed: Option<admin::types::Seed>,
    state_file: Option<PathBuf>,
    state_log_limit: u64,
    limits: server::Limits,
}

impl Default for SimulatorBuilder {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            config: Config {
                app_token: DEFAULT_APP_TOKEN.to_string(),
                client_token: DEFAULT_CLIENT_TOKEN.to_string(),
                user_token: DEFAULT_USER_TOKEN.to_string(),
                password_length: DEFAULT_PASSWORD_LENGTH,
                trial_member_limit: DEFAULT_TRIAL_MEMBER_LIMIT,
                nonce_window: DEFAULT_NONCE_WINDOW,
                nonce_capacity: DEFAULT_NONCE_CAPACITY,
                admin_token: None,
                journal_capacity: DEFAULT_JOURNAL_CAPACITY,
            },
            region: None,
            faults: FaultSettings::default(),
            tls: None,
            seed: None,
            state_file: None,
            state_log_limit: DEFAULT_STATE_LOG_LIMIT,
            limits: server::Limits::default(),
        }
    }
}

impl SimulatorBuilder {
    /// The address to listen on (default `127.0.0.1:0`: an ephemeral port).
    pub fn addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// The application token the order service accepts (default [`DEFAULT_APP_TOKEN`]).
    pub fn app_token(mut self, token: impl Into<String>) -> Self {
        self.config.app_token = token.into();
        self
    }

    /// The client token the member center accepts (default [`DEFAULT_CLIENT_TOKEN`]).
    pub fn client_token(mut self, token: impl Into<String>) -> Self {
        self.config.client_token = token.into();
        self
    }

    /// The user token the member center accepts (default [`DEFAULT_USER_TOKEN`]).
    pub fn user_token(mut self, token: impl Into<String>) -> Self {
        self.config.user_token = token.into();
        self
    }

    /// The region marker of allocated asset numbers (default [`Region::Domestic`], or
    /// with a [state file](SimulatorBuilder::state_file) the region it holds);
    /// changeable later with [`Simulator::set_region`].
    pub fn region(mut self, region: Region) -> Self {
        self.region = Some(region);
        self
    }

    /// Accepted password lengths in characters (default [`DEFAULT_PASSWORD_LENGTH`]);
    /// outside it `addMembers` and `resetMemberPassword` answer `50003`.
    pub fn password_length(mut self, range: RangeInclusive<usize>) -> Self {
        self.config.password_length = range;
        self
    }

    /// Trial member accounts (employees added through `addMembers`) one enterprise may
    /// hold (default [`DEFAULT_TRIAL_MEMBER_LIMIT`]); beyond it items fail with `60009`.
    pub fn trial_member_limit(mut self, limit: usize) -> Self {
        self.config.trial_member_limit = limit;
        self
    }

    /// How long a `g_nonce` is remembered for replay detection (default
    /// [`DEFAULT_NONCE_WINDOW`]).
    pub fn nonce_window(mut self, window: Duration) -> Self {
        self.config.nonce_window = window;
        self
    }

    /// How many `g_nonce`s are remembered at most; the oldest are forgotten first (default
    /// [`DEFAULT_NONCE_CAPACITY`]).
    pub fn nonce_capacity(mut self, capacity: usize) -> Self {
        self.config.nonce_capacity = capacity.max(1);
        self
    }

    /// The token the admin API (`/__sandbox/v1/…`, [`admin`]) requires as
    /// `Authorization: Bearer <token>` (default none: the admin API is open, which suits a
    /// simulator on loopback).
    pub fn admin_token(mut self, token: impl Into<String>) -> Self {
        self.config.admin_token = Some(token.into());
        self
    }

    /// A seed loaded before the simulator accepts connections, into an empty state only
    /// (a state file that holds enterprises is not seeded again); default none. See
    /// [`admin::parse_seed`] and [`admin::builtin_seed`]. A seed that fails stops the
    /// start with an error naming the field.
    pub fn seed(mut self, seed: admin::types::Seed) -> Self {
        self.seed = Some(seed);
        self
    }

    /// How many requests the journal keeps, newest last (default
    /// [`DEFAULT_JOURNAL_CAPACITY`]; 0 keeps none and skips the journal's work).
    pub fn journal_capacity(mut self, capacity: usize) -> Self {
        self.config.journal_capacity = capacity;
        self
    }

    /// Initial fault injection (default none); changeable later through
    /// [`Simulator::faults`].
    pub fn faults(mut self, faults: FaultSettings) -> Self {
        self.faults = faults;
        self
    }

    /// Serves HTTPS with this certificate chain and key instead of plain HTTP (default
    /// none): [`Simulator::url`] then starts with `https://`. A client whose TLS handshake
    /// fails (it sent plain HTTP, rejected the certificate, or did not finish within the
    /// [header timeout](Self::header_timeout)) is logged at debug level and disconnected;
    /// the others are not affected. The limits of plain HTTP apply to HTTPS as well.
    ///
    /// ```no_run
    /// # async fn demo(cert_pem: &[u8], key_pem: &[u8]) -> std::io::Result<()> {
    /// use licensing_sim::{Simulator, TlsConfig};
    ///
    /// let sim = Simulator::builder()
    ///     .tls(TlsConfig::from_pem(cert_pem, key_pem)?)
    ///     .start()
    ///     .await?;
    /// assert!(sim.is_tls());
    /// # Ok(()) }
    /// ```
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Keeps the state in `path` (default none: in memory only): the state it holds is
    /// loaded at start, and every change (a mutating request, whatever it answers; a
    /// clock or region change; an import or reset) is on disk before it is acknowledged,
    /// so a crash or `kill -9` at any moment loses nothing that was acknowledged. Changes
    /// go to an append-only log, `PATH.log`, compacted into `PATH` at start and as it
    /// grows; `PATH.lock` keeps a second simulator away. The files hold the employees'
    /// passwords, as the simulator does in memory, and are readable by their owner only.
    ///
    /// A file that cannot be read or is not a usable state stops
    /// [`start`](SimulatorBuilder::start) with a [`StateFileError`] naming the file and
    /// the problem; the file is left as it is. An empty file is a fresh start.
    ///
    /// ```no_run
    /// # async fn demo() -> std::io::Result<()> {
    /// let sim = licensing_sim::Simulator::builder()
    ///     .state_file("target/sim-state.json")
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state_file = Some(path.into());
        self
    }

    /// How large the state file's log may grow, in bytes, before it is compacted into the
    /// state file (default [`DEFAULT_STATE_LOG_LIMIT`]). Compaction also waits until the
    /// log is larger than the state file, so that its cost per change stays bounded.
    pub fn state_log_limit(mut self, bytes: u64) -> Self {
        self.state_log_limit = bytes;
        self
    }

    /// How long a client has to send a request's headers (default
    /// [`DEFAULT_HEADER_TIMEOUT`], at least 1 ms): counted from the connection's start (over
    /// HTTPS, the TLS handshake has this long too, and the count starts again once it is
    /// done) or, on a reused connection, from the request's first byte. A connection whose
    /// client is slower is closed without a reply.
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a request's body may take to arrive in full, counted from its headers
    /// (default [`DEFAULT_BODY_TIMEOUT`], at least 1 ms). A slower request is answered with
    /// code `500` ("network exception, retry"), and its connection closed.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a connection may stay open without a request after a reply (default
    /// [`DEFAULT_IDLE_TIMEOUT`], at least 1 ms); then it is closed.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How many connections may be open at once (default [`DEFAULT_MAX_CONNECTIONS`], at
    /// least 1; lowered at start to the process's open-file limit less 64, when that is
    /// smaller). When all are taken, a new connection replaces the one that has gone
    /// longest without a request in progress (waiting for its first request, or idle
    /// between requests); when every one has a request in progress, the new connection is
    /// closed at once. A request in progress is never cut short to make room.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.limits.max_connections = max.max(1);
        self
    }

    /// How many bytes of request bodies may be held in memory at once, across all
    /// connections (default [`DEFAULT_BODY_BUDGET`], 512 MiB). A body is read in full
    /// before its operation runs and counted until the operation has answered; a body
    /// that declares its length reserves it up front. A request whose body does not fit in
    /// what is left is answered with code `500` ("network exception, retry") without being
    /// read, which the SDK retries. One request's body may be at most 256 MiB or the
    /// budget, whichever is smaller; a larger one is answered as a malformed request.
    ///
    /// The process's memory then stays near this budget plus a fixed size per connection
    /// (see the README's "Limits"), however many bodies arrive at once.
    pub fn body_budget(mut self, bytes: usize) -> Self {
        self.limits.body_budget = bytes;
        self
    }

    /// Loads the state file, if any, then binds the address and starts serving on the
    /// current Tokio runtime.
    pub async fn start(self) -> io::Result<Simulator> {
        let (loaded, log) = match &self.state_file {
            Some(path) => {
                let (loaded, log) =
                    persist::open(path, &self.config, self.region, self.state_log_limit)?;
                (loaded, Some(log))
            }
            None => (
                persist::Loaded::fresh(self.region.unwrap_or_default()),
                None,
            ),
        };
        let listener = tokio::net::TcpListener::bind(self.addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(self.config, self.faults, loaded, log));
        // A state file that already holds records was seeded before (or has better).
        let fresh = shared.state().enterprises.is_empty();
        if let Some(seed) = self.seed.as_ref().filter(|_| fresh) {
            sandbox::seed::load(&shared, seed).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("the seed: {e}"))
            })?;
        }
        let app = routes::app(Arc::clone(&shared));
        let (stop, stopped) = oneshot::channel::<()>();
        let is_tls = self.tls.is_some();
        let server = Arc::new(server::Server::new(self.limits));
        let acceptor = self.tls.map(|tls| tls.acceptor());
        let task = tokio::spawn(server::serve(
            listener,
            app,
            acceptor,
            Arc::clone(&server),
            stopped,
        ));
        tracing::debug!(%addr, tls = is_tls, limits = ?server, "simulator listening");
        Ok(Simulator {
            addr,
            tls: is_tls,
            shared,
            server,
            stop: Some(stop),
            task: Some(task),
        })
    }
}

/// A running simulator; stopped by [`Simulator::shutdown`] or when dropped.
#[derive(Debug)]
pub struct Simulator {
    addr: SocketAddr,
    tls: bool,
    shared: Arc<Shared>,
    server: Arc<server::Server>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
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
        admin::client(&self.url(), self.shared.config.admin_token.as_deref())
            .expect("a client for the simulator's own address")
    }

    /// What the server's limits have done so far: connections open, refused, evicted and
    /// timed out, and the bytes of request bodies held now and at most
    /// ([`SimulatorBuilder::body_budget`]).
    pub fn stats(&self) -> ServerStats {
        self.server.stats()
    }

    /// Fault injection, adjustable while the simulator runs.
    pub fn faults(&self) -> &Faults {
        &self.shared.faults
    }

    /// The simulator's clock: every time it writes (creation, update and assignment
    /// times) is read from it. It starts as the machine's clock and can be set, advanced
    /// and frozen while the simulator runs; see [`Clock`].
    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    /// The region marker of asset numbers allocated from now on.
    pub fn region(&self) -> Region {
        self.shared.allocator().region()
    }

    /// Switches the region marker of asset numbers allocated from now on. Each region
    /// keeps its own sequence, so no number is ever handed out twice.
    pub fn set_region(&self, region: Region) {
        self.shared.set_region(region);
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
        self.shared.export_state()
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
        self.shared.import_state(state)
    }

    /// Forgets everything the simulator holds: every record, the numbers handed out (the
    /// region stays) and any clock setting, as if it had just started. With a state file
    /// the empty state is written first; an error means it could not be, and nothing
    /// changed.
    pub fn reset(&self) -> io::Result<()> {
        self.shared.reset()
    }

    /// Removes one enterprise with its customers, their orders, its assets (their
    /// numbers are never sold again, as after a revocation), its employees and their
    /// loans, leaving no reference to any of them. Returns whether the enterprise existed.
    /// With a state file an error means the removal (made in memory) could not be written;
    /// the simulator then refuses changes until it can write its state again.
    pub fn reset_enterprise(&self, global_id: &str) -> io::Result<bool> {
        self.shared.reset_enterprise(global_id)
    }

    /// Stops accepting connections, lets requests in flight finish (for up to five
    /// seconds) and returns once the server has stopped.
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(mut task) = self.task.take() else {
            return Ok(());
        };
        match tokio::time::timeout(Duration::from_secs(5), &mut task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(io::Error::other(join)),
            Err(_) => {
                // A client holding a connection open must not keep the caller waiting.
                task.abort();
                Ok(())
            }
        }
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The simulator's manual (its README): the command line, the rules it applies, its
/// protocol checks and limits, and what it chose where the platform's documents are
/// silent. Its Rust examples are compiled as doctests.
#[doc = include_str!("../README.md")]
pub mod guide {}
