//! Configuring and starting a simulator: what each layer is given, and how they are
//! wired together.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr},
    ops::RangeInclusive,
    path::PathBuf,
    sync::Arc,
    time::Duration,
};

use licensing_host::{
    admin::AdminAccess,
    server::{self, TlsConfig},
};
use tokio::sync::oneshot;

use crate::{
    Clock, DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_JOURNAL_CAPACITY,
    DEFAULT_NONCE_CAPACITY, DEFAULT_NONCE_WINDOW, DEFAULT_PASSWORD_LENGTH, DEFAULT_STATE_LOG_LIMIT,
    DEFAULT_TRIAL_MEMBER_LIMIT, DEFAULT_USER_TOKEN, FaultSettings, Region, Simulator, admin,
    ops::{Db, Loaded, OpenOptions, Settings},
    protocol::{self, Credentials},
    sandbox, store,
    tenants::{self, Console, Durable, Registry, Router, Template, Unit},
};

/// What a [`Simulator`] accepts and how it behaves; set through [`SimulatorBuilder`].
#[derive(Clone)]
struct Config {
    credentials: Credentials,
    admin_token: Option<String>,
    allowed_hosts: Vec<String>,
    max_string_bytes: usize,
    settings: Settings,
    nonce_window: Duration,
    nonce_capacity: usize,
    journal_capacity: usize,
    journal_bytes: usize,
}

/// Tokens stay out of logs, as the SDK keeps its own.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("credentials", &self.credentials)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "[REDACTED]"),
            )
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_string_bytes", &self.max_string_bytes)
            .field("settings", &self.settings)
            .field("nonce_window", &self.nonce_window)
            .field("nonce_capacity", &self.nonce_capacity)
            .field("journal_capacity", &self.journal_capacity)
            .field("journal_bytes", &self.journal_bytes)
            .finish()
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
    recover: bool,
    write_faults: store::WriteFaults,
    limits: server::Limits,
    sandbox_limits: sandbox::Limits,
    max_tenants: usize,
    tenant_ttl: Duration,
}

impl Default for SimulatorBuilder {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            config: Config {
                credentials: Credentials {
                    app_token: DEFAULT_APP_TOKEN.to_string(),
                    client_token: DEFAULT_CLIENT_TOKEN.to_string(),
                    user_token: DEFAULT_USER_TOKEN.to_string(),
                },
                admin_token: None,
                allowed_hosts: Vec::new(),
                max_string_bytes: protocol::DEFAULT_MAX_STRING_BYTES,
                settings: Settings {
                    password_length: DEFAULT_PASSWORD_LENGTH,
                    trial_member_limit: DEFAULT_TRIAL_MEMBER_LIMIT,
                    max_enterprises: crate::DEFAULT_MAX_ENTERPRISES,
                    max_members: crate::DEFAULT_MAX_MEMBERS,
                    max_orders: crate::DEFAULT_MAX_ORDERS,
                },
                nonce_window: DEFAULT_NONCE_WINDOW,
                nonce_capacity: DEFAULT_NONCE_CAPACITY,
                journal_capacity: DEFAULT_JOURNAL_CAPACITY,
                journal_bytes: crate::DEFAULT_JOURNAL_BYTES,
            },
            region: None,
            faults: FaultSettings::default(),
            tls: None,
            seed: None,
            state_file: None,
            state_log_limit: DEFAULT_STATE_LOG_LIMIT,
            recover: false,
            write_faults: store::WriteFaults::default(),
            sandbox_limits: sandbox::Limits::default(),
            limits: server::Limits::default(),
            max_tenants: tenants::DEFAULT_MAX_TENANTS,
            tenant_ttl: tenants::DEFAULT_TENANT_TTL,
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
        self.config.credentials.app_token = token.into();
        self
    }

    /// The client token the member center accepts (default [`DEFAULT_CLIENT_TOKEN`]).
    pub fn client_token(mut self, token: impl Into<String>) -> Self {
        self.config.credentials.client_token = token.into();
        self
    }

    /// The user token the member center accepts (default [`DEFAULT_USER_TOKEN`]).
    pub fn user_token(mut self, token: impl Into<String>) -> Self {
        self.config.credentials.user_token = token.into();
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
        self.config.settings.password_length = range;
        self
    }

    /// Trial member accounts (employees added through `addMembers`) one enterprise may
    /// hold (default [`DEFAULT_TRIAL_MEMBER_LIMIT`]); beyond it items fail with `60009`.
    pub fn trial_member_limit(mut self, limit: usize) -> Self {
        self.config.settings.trial_member_limit = limit;
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

    /// The most enterprises, employees and license orders the state may hold (defaults
    /// [`DEFAULT_MAX_ENTERPRISES`](crate::DEFAULT_MAX_ENTERPRISES),
    /// [`DEFAULT_MAX_MEMBERS`](crate::DEFAULT_MAX_MEMBERS),
    /// [`DEFAULT_MAX_ORDERS`](crate::DEFAULT_MAX_ORDERS)): a call that would pass one is
    /// refused whole with the operation's code for an invalid request (`13004`; `40000` for
    /// `addMembers`), naming the bound.
    pub fn max_records(mut self, enterprises: usize, members: usize, orders: usize) -> Self {
        let settings = &mut self.config.settings;
        (
            settings.max_enterprises,
            settings.max_members,
            settings.max_orders,
        ) = (enterprises, members, orders);
        self
    }

    /// Another name the admin API answers to on a loopback address, besides `localhost`,
    /// `127.0.0.1` and `[::1]` with the listener's port (any port with this name): a
    /// container's or a proxy's name. Requests to the admin API naming another host are
    /// refused (`403`), so that a web page that rebinds its own name to this address
    /// cannot reach it. Repeatable.
    pub fn allowed_host(mut self, name: impl Into<String>) -> Self {
        self.config.allowed_hosts.push(name.into());
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

    /// How many bytes of requests and replies the journal keeps at once (default
    /// [`DEFAULT_JOURNAL_BYTES`](crate::DEFAULT_JOURNAL_BYTES)); the oldest entries go
    /// first, as when it holds [`journal_capacity`](Self::journal_capacity) entries.
    pub fn journal_max_bytes(mut self, bytes: usize) -> Self {
        self.config.journal_bytes = bytes;
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
    #[cfg(feature = "tls")]
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
    /// [`start`](SimulatorBuilder::start) with a [`StateFileError`](crate::StateFileError) naming the file and
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

    /// The longest string one field of a request body may hold, in bytes (default
    /// [`DEFAULT_MAX_STRING_BYTES`](crate::DEFAULT_MAX_STRING_BYTES)). The documents give
    /// no bound but for a few names; a longer string is refused, before the operation
    /// runs, with the operation's code for a malformed request (`13004` on the order
    /// service; `40000`, or `70001` where an operation does not list it, on the member
    /// center), and nothing of it is kept or echoed.
    pub fn max_string_bytes(mut self, bytes: usize) -> Self {
        self.config.max_string_bytes = bytes;
        self
    }

    /// The largest seed document the admin API takes, in bytes (default
    /// [`DEFAULT_MAX_SEED_BYTES`](crate::DEFAULT_MAX_SEED_BYTES)): a larger one is refused
    /// before it is read.
    pub fn max_seed_bytes(mut self, bytes: usize) -> Self {
        self.sandbox_limits.max_seed_bytes = bytes;
        self
    }

    /// The most records (enterprises, customers, assets and employees together) one seed
    /// may create (default [`DEFAULT_MAX_SEED_RECORDS`](crate::DEFAULT_MAX_SEED_RECORDS)):
    /// a seed with more is refused before anything is created.
    pub fn max_seed_records(mut self, records: usize) -> Self {
        self.sandbox_limits.max_seed_records = records;
        self
    }

    /// The largest state document an import takes, in bytes (default
    /// [`DEFAULT_MAX_IMPORT_BYTES`](crate::DEFAULT_MAX_IMPORT_BYTES)): a larger one is
    /// refused before it is read.
    pub fn max_import_bytes(mut self, bytes: usize) -> Self {
        self.sandbox_limits.max_import_bytes = bytes;
        self
    }

    /// Starts even when the state file's log is damaged (default `false`: such a log stops
    /// the start with a [`StateFileError`](crate::StateFileError) naming the file, the byte and this way out):
    /// the state is loaded up to the last whole change before the damage, and the damaged
    /// log is moved aside to `PATH.log.damaged`, never deleted. What came after the damage
    /// is lost; without this, nothing is loaded until someone decides.
    pub fn recover(mut self, recover: bool) -> Self {
        self.recover = recover;
        self
    }

    /// Makes the next `n` writes of the state file's log fail as a full disk does, to
    /// test what clients see then (each such change is refused with code `500` and not
    /// applied). The returned handle sets it again while the simulator runs.
    #[doc(hidden)]
    pub fn failing_state_writes(self, n: u32) -> (Self, StateWriteFaults) {
        self.write_faults.fail_next(n);
        let handle = StateWriteFaults(self.write_faults.clone());
        (self, handle)
    }

    /// How long a client has to send a request's headers (default
    /// [`DEFAULT_HEADER_TIMEOUT`](crate::DEFAULT_HEADER_TIMEOUT), at least 1 ms): counted from the connection's start (over
    /// HTTPS, the TLS handshake has this long too, and the count starts again once it is
    /// done) or, on a reused connection, from the request's first byte. A connection whose
    /// client is slower is closed without a reply.
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a request's body may take to arrive in full, counted from its headers
    /// (default [`DEFAULT_BODY_TIMEOUT`](crate::DEFAULT_BODY_TIMEOUT), at least 1 ms). A slower request is answered with
    /// code `500` ("network exception, retry"), and its connection closed.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a connection may stay open without a request after a reply (default
    /// [`DEFAULT_IDLE_TIMEOUT`](crate::DEFAULT_IDLE_TIMEOUT), at least 1 ms); then it is closed.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a reply may wait on its client (default
    /// [`DEFAULT_WRITE_TIMEOUT`](crate::DEFAULT_WRITE_TIMEOUT), at least 1 ms). Over HTTP/2 a
    /// reply none of which the client lets through for this long (a zero flow-control
    /// window, or a client that does not read) is given up: its stream is reset and its
    /// memory freed; a connection with 4 replies given up, or with no other request in
    /// progress, is closed. Over HTTP/1.1 a connection whose client has taken none of its
    /// reply for this long is closed. A connection whose every request in progress is such
    /// a reply, waiting for a second or more, may be closed to make room like a quiet one
    /// (for a new connection, or for a reply, see [`reply_budget`](Self::reply_budget)).
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.limits.write_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How many connections may be open at once (default [`DEFAULT_MAX_CONNECTIONS`](crate::DEFAULT_MAX_CONNECTIONS), at
    /// least 1; lowered at start to the process's open-file limit less 64, when that is
    /// smaller). When all are taken, a new connection replaces the one that has gone
    /// longest without a request in progress (waiting for its first request, or idle
    /// between requests; an HTTP/2 reply that has waited on its client for a second counts
    /// as none, see [`write_timeout`](Self::write_timeout)); when every one has a request in
    /// progress, the new connection is closed at once. A request in progress is never cut
    /// short to make room.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.limits.max_connections = max.max(1);
        self
    }

    /// How many bytes of request bodies may be held in memory at once, across all
    /// connections (default [`DEFAULT_BODY_BUDGET`](crate::DEFAULT_BODY_BUDGET), 512 MiB). A body is read in full
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

    /// How many bytes of replies built and not yet handed to their connection may be held
    /// at once, across all connections (default
    /// [`DEFAULT_REPLY_BUDGET`](crate::DEFAULT_REPLY_BUDGET), 64 MiB). A reply is counted
    /// from when it is built until its last piece is handed over, or its stream or
    /// connection is closed. One that does not fit first makes room by closing connections
    /// whose every reply has waited on its client for a second (see
    /// [`write_timeout`](Self::write_timeout)); then a reply over 64 KiB to an admin `GET`
    /// (journal, state export) is answered `503` with `Retry-After: 1`, and any other is
    /// sent over the budget (an operation's reply: the operation has run). A reply larger
    /// than the whole budget is sent when other replies hold at most 1/64 of it, so one
    /// export of any size works on a server otherwise idle.
    pub fn reply_budget(mut self, bytes: usize) -> Self {
        self.limits.reply_budget = bytes.max(1);
        self
    }

    /// How many tenants ([`Simulator::tenant`], `POST /__sandbox/v1/tenants`) the
    /// simulator holds at once (default [`DEFAULT_MAX_TENANTS`](crate::DEFAULT_MAX_TENANTS);
    /// `0`: none). Creating one more is refused ([`TenantError::Full`](crate::TenantError::Full),
    /// `409` on the admin API). Each tenant's bounds are this share of the simulator's:
    /// the records ([`max_records`](Self::max_records)), the journal's bytes and the
    /// `g_nonce`s remembered, divided by this number (with a floor: 10 enterprises, 100
    /// employees and orders, 256 KiB of journal, 1,000 nonces), so that the simulator full
    /// of tenants holds about what its default tenant alone may.
    pub fn max_tenants(mut self, max: usize) -> Self {
        self.max_tenants = max;
        self
    }

    /// How long a tenant no request reaches is kept when its creation does not say
    /// (default [`DEFAULT_TENANT_TTL`](crate::DEFAULT_TENANT_TTL), one hour; from 1 second to
    /// [`MAX_TENANT_TTL`](crate::MAX_TENANT_TTL)). Measured on tokio's clock, which a test
    /// can pause and advance.
    pub fn tenant_ttl(mut self, ttl: Duration) -> Self {
        self.tenant_ttl = ttl;
        self
    }

    /// Loads the state file, if any, then binds the address and starts serving on the
    /// current Tokio runtime.
    pub async fn start(mut self) -> io::Result<Simulator> {
        let Config {
            credentials,
            admin_token,
            allowed_hosts,
            max_string_bytes,
            settings,
            nonce_window,
            nonce_capacity,
            journal_capacity,
            journal_bytes,
        } = self.config;
        let db = match &self.state_file {
            Some(path) => {
                let options = OpenOptions {
                    region: self.region,
                    log_limit: self.state_log_limit,
                    recover: self.recover,
                    faults: self.write_faults.clone(),
                };
                Db::open(path, settings.clone(), options)?
            }
            None => Db::in_memory(
                settings.clone(),
                Loaded::fresh(self.region.unwrap_or_default()),
            ),
        };
        let listener = tokio::net::TcpListener::bind(self.addr).await?;
        let addr = listener.local_addr()?;
        let template = Template {
            settings,
            max_string_bytes,
            nonce_window,
            nonce_capacity,
            journal_capacity,
            journal_bytes,
            limits: self.sandbox_limits,
            faults: self.faults,
        };
        let admin = AdminAccess {
            token: admin_token.clone(),
            loopback_port: addr.ip().is_loopback().then_some(addr.port()),
            scheme: if self.tls.is_some() { "https" } else { "http" },
            allowed_hosts,
            ..AdminAccess::default()
        };
        let durable = self.state_file.as_deref().map(|path| Durable {
            root: tenants::root_beside(path),
            log_limit: self.state_log_limit,
        });
        let registry = Arc::new(Registry::new(
            &template,
            self.max_tenants,
            self.tenant_ttl,
            AdminAccess {
                token: None,
                sessions: Arc::default(),
                ..admin.clone()
            },
            durable,
        ));
        registry.restore(self.recover)?;
        let (routes, console) = (registry.routes(), Console::Simulator(Arc::clone(&registry)));
        let unit = Unit::build(&template, db, credentials, admin, routes, console);
        // A state file that already holds records was seeded before (or has better).
        let fresh = unit.db.counts().0 == 0;
        if let Some(seed) = self.seed.take().filter(|_| fresh) {
            sandbox::seed::load_quietly(&unit.db, seed, &self.sandbox_limits).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("the seed: {e}"))
            })?;
        }
        let router = Router {
            default: unit.app.clone(),
            registry: Arc::clone(&registry),
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let is_tls = self.tls.is_some();
        let server = Arc::new(server::Server::new(self.limits));
        let acceptor = self.tls.map(|tls| tls.acceptor());
        let task = tokio::spawn(server::serve(
            listener,
            router,
            acceptor,
            Arc::clone(&server),
            stopped,
        ));
        let reaper = tokio::spawn(tenants::reap_idle(
            Arc::downgrade(&registry),
            Arc::clone(&registry.wake),
        ));
        tracing::debug!(%addr, tls = is_tls, limits = ?server, "simulator listening");
        Ok(Simulator {
            addr,
            tls: is_tls,
            clock: Clock::new(Arc::clone(&unit.db)),
            db: unit.db,
            sandbox: unit.sandbox,
            registry,
            admin_token,
            server,
            stop: Some(stop),
            task: Some(task),
            reaper: Some(reaper),
        })
    }
}

/// Makes writes of a running simulator's state file fail ([`SimulatorBuilder::failing_state_writes`]).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct StateWriteFaults(store::WriteFaults);

impl StateWriteFaults {
    /// Fails the next `n` writes of the log.
    pub fn fail_next(&self, n: u32) {
        self.0.fail_next(n);
    }
}
