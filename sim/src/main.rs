//! `licensing-sim`: serves both services of the licensing platform from memory, for
//! local development, examples and contract tests.
//!
//! Prints exactly one line on stdout, `listening on http://HOST:PORT` (`https://` with
//! `--tls-cert` and `--tls-key`), once it accepts connections; logs go to stderr
//! (`RUST_LOG`, default `warn`). Stops cleanly on Ctrl-C or SIGTERM.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, time::Duration};

use clap::Parser;
use licensing_sim::{self as sim, FaultSettings, Region, Simulator, StateFileError, TlsConfig};
use tracing_subscriber::EnvFilter;

// A batch parses, copies into state and frees millions of small values in one request; a
// profile of one of 10,000 orders found a third of the simulator's time in glibc's malloc
// and free. Only the binary: a program embedding the library keeps its own allocator.
#[global_allocator]
static ALLOCATOR: MiMalloc = MiMalloc;

/// mimalloc, asked for alignment only when a layout needs more than every block has.
/// `mimalloc::MiMalloc` passes every layout to `mi_malloc_aligned`, whose version 3 takes
/// its fast path only for blocks of at most 1 KiB and over-allocates larger ones whose
/// size is not a power of two (`mi_theap_malloc_zero_aligned_at_overalloc`, marking the
/// page for slower frees): callgrind counted 6 such calls a request, and this adaptor
/// saved 850 of 27,900 instructions a request on `shellnums` and 1.8% on a 1,000-order
/// batch. Every mimalloc block is at least word-aligned, the rule mimalloc's own
/// `mi_realloc_aligned` uses to take its plain path; std's for `malloc` adds that the
/// alignment not exceed the size.
struct MiMalloc;

/// Whether `mi_malloc`'s blocks already meet a layout's alignment.
fn plain(align: usize, size: usize) -> bool {
    align <= std::mem::size_of::<usize>() && align <= size
}

// SAFETY: each call hands mimalloc's own function the layout's size (and alignment where
// `plain` does not hold); mimalloc returns null on failure, as `GlobalAlloc` requires, and
// `mi_free` takes any block from either family.
#[allow(unsafe_code)] // a global allocator is an `unsafe impl` on mimalloc's C functions
unsafe impl std::alloc::GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_malloc, mi_malloc_aligned};
        let (size, align) = (layout.size(), layout.align());
        // SAFETY: see the impl.
        unsafe {
            if plain(align, size) {
                mi_malloc(size).cast()
            } else {
                mi_malloc_aligned(size, align).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_zalloc, mi_zalloc_aligned};
        let (size, align) = (layout.size(), layout.align());
        // SAFETY: see the impl.
        unsafe {
            if plain(align, size) {
                mi_zalloc(size).cast()
            } else {
                mi_zalloc_aligned(size, align).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from this allocator (the caller's contract).
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys::{mi_realloc, mi_realloc_aligned};
        // SAFETY: `ptr` came from this allocator with `layout` (the caller's contract).
        unsafe {
            if plain(layout.align(), new_size) {
                mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

/// mimalloc's `mi_option_purge_delay`: 15 in the `mi_option_t` of both its major versions,
/// which keeps retired options in the list so that the numbers hold (`libmimalloc-sys`
/// declares the option functions but has no constant for this one).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// mimalloc's default purge delays, in milliseconds: version 3's, version 2's.
const MI_DEFAULT_PURGE_DELAYS: [std::ffi::c_long; 2] = [1_000, 10];

/// Freed memory is given back to the system 10 s after it is freed instead of 1 s: a batch
/// of 50,000 orders frees hundreds of megabytes at once, and the next one, a second or two
/// later, took them back page by page, the kernel zeroing each (a third of the simulator's
/// time on such a batch in a profile). What it holds at rest hardly moves (1.05 GB against
/// 1.01 GB after such a batch and a reset: mimalloc purges as it allocates, not on a
/// timer). Left alone when `MIMALLOC_PURGE_DELAY` is set, or when the option does not read
/// as one of its documented defaults (a mimalloc whose numbering moved).
#[allow(unsafe_code)] // mimalloc's options have no safe API (`libmimalloc-sys`'s are `unsafe`)
fn hold_freed_memory() {
    use libmimalloc_sys::{mi_option_get, mi_option_set};
    // SAFETY: both functions only read or write mimalloc's option table; any option
    // number is accepted (an unknown one is ignored). They are not thread-safe: this runs
    // first thing in `main`, before the runtime starts any other thread.
    unsafe {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none()
            && MI_DEFAULT_PURGE_DELAYS.contains(&mi_option_get(MI_OPTION_PURGE_DELAY))
        {
            mi_option_set(MI_OPTION_PURGE_DELAY, 10_000);
        }
    }
}

/// A stateful, in-memory simulator of the licensing platform's order service and
/// member center.
#[derive(Debug, Parser)]
#[command(name = "licensing-sim", version)]
struct Args {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, env = "LICENSING_SIM_ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,

    /// Serve HTTPS with this PEM certificate chain (server certificate first); needs
    /// --tls-key.
    #[arg(
        long,
        env = "LICENSING_SIM_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key"
    )]
    tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert; needs --tls-cert.
    #[arg(
        long,
        env = "LICENSING_SIM_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert"
    )]
    tls_key: Option<PathBuf>,

    /// Application token the order service accepts (`Authorization: Bearer …`).
    #[arg(long, env = "LICENSING_SIM_APP_TOKEN", default_value = sim::DEFAULT_APP_TOKEN)]
    app_token: String,

    /// Client token the member center accepts (`Authorization: Bearer …` and `clientToken`).
    #[arg(long, env = "LICENSING_SIM_CLIENT_TOKEN", default_value = sim::DEFAULT_CLIENT_TOKEN)]
    client_token: String,

    /// User token the member center accepts (`userToken`).
    #[arg(long, env = "LICENSING_SIM_USER_TOKEN", default_value = sim::DEFAULT_USER_TOKEN)]
    user_token: String,

    /// Region marker of allocated asset numbers: `domestic` (8) or `singapore` (6)
    /// [default: domestic, or the state file's].
    #[arg(long, env = "LICENSING_SIM_REGION")]
    region: Option<Region>,

    /// Keep the state in this file: loaded at start, every change on disk before it is
    /// acknowledged (changes go to FILE.log, compacted into FILE).
    #[arg(long, env = "LICENSING_SIM_STATE_FILE", value_name = "FILE")]
    state_file: Option<PathBuf>,

    /// Start even when the state file's log is damaged: keep the state up to the last
    /// whole change and move the log aside to FILE.log.damaged (without it, a damaged log
    /// stops the start, naming the file and the byte).
    #[arg(long, env = "LICENSING_SIM_RECOVER")]
    recover: bool,

    /// Enterprises the state may hold at most.
    #[arg(long, env = "LICENSING_SIM_MAX_ENTERPRISES", default_value_t = sim::DEFAULT_MAX_ENTERPRISES)]
    max_enterprises: usize,

    /// Employees the state may hold at most.
    #[arg(long, env = "LICENSING_SIM_MAX_EMPLOYEES", default_value_t = sim::DEFAULT_MAX_MEMBERS)]
    max_employees: usize,

    /// License orders the state may hold at most.
    #[arg(long, env = "LICENSING_SIM_MAX_ORDERS", default_value_t = sim::DEFAULT_MAX_ORDERS)]
    max_orders: usize,

    /// Longest string one field of a request body may hold, in bytes.
    #[arg(long, env = "LICENSING_SIM_MAX_STRING_BYTES", value_name = "BYTES", default_value_t = sim::DEFAULT_MAX_STRING_BYTES)]
    max_string_bytes: usize,

    /// Largest seed (--seed, or through the admin API), in bytes.
    #[arg(long, env = "LICENSING_SIM_MAX_SEED_BYTES", value_name = "BYTES", default_value_t = sim::DEFAULT_MAX_SEED_BYTES)]
    max_seed_bytes: usize,

    /// Most records (enterprises, customers, assets, employees) one seed may create.
    #[arg(long, env = "LICENSING_SIM_MAX_SEED_RECORDS", default_value_t = sim::DEFAULT_MAX_SEED_RECORDS)]
    max_seed_records: usize,

    /// Largest state document an import (PUT /__sandbox/v1/state) may send, in bytes.
    #[arg(long, env = "LICENSING_SIM_MAX_IMPORT_BYTES", value_name = "BYTES", default_value_t = sim::DEFAULT_MAX_IMPORT_BYTES)]
    max_import_bytes: usize,

    /// Bytes the state file's log may reach before it is compacted (and not before it
    /// outgrows the state file).
    #[arg(long, env = "LICENSING_SIM_STATE_LOG_LIMIT", value_name = "BYTES", default_value_t = sim::DEFAULT_STATE_LOG_LIMIT)]
    state_log_limit: u64,

    /// Shortest accepted password (error 50003 outside the range).
    #[arg(long, env = "LICENSING_SIM_PASSWORD_MIN", default_value_t = *sim::DEFAULT_PASSWORD_LENGTH.start())]
    password_min: usize,

    /// Longest accepted password.
    #[arg(long, env = "LICENSING_SIM_PASSWORD_MAX", default_value_t = *sim::DEFAULT_PASSWORD_LENGTH.end())]
    password_max: usize,

    /// Trial member accounts per enterprise (error 60009 beyond).
    #[arg(long, env = "LICENSING_SIM_TRIAL_MEMBER_LIMIT", default_value_t = sim::DEFAULT_TRIAL_MEMBER_LIMIT)]
    trial_member_limit: usize,

    /// Seconds a g_nonce is remembered for replay detection.
    #[arg(long, env = "LICENSING_SIM_NONCE_WINDOW_SECS", default_value_t = sim::DEFAULT_NONCE_WINDOW.as_secs())]
    nonce_window_secs: u64,

    /// Seconds a client has to send a request's headers (and to finish the TLS handshake);
    /// a slower one is disconnected.
    #[arg(long, env = "LICENSING_SIM_HEADER_TIMEOUT_SECS", default_value_t = sim::DEFAULT_HEADER_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout_secs: u64,

    /// Seconds a request's body may take to arrive after its headers; a slower one is
    /// answered with code 500.
    #[arg(long, env = "LICENSING_SIM_BODY_TIMEOUT_SECS", default_value_t = sim::DEFAULT_BODY_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout_secs: u64,

    /// Seconds a connection may stay open without a request after a reply.
    #[arg(long, env = "LICENSING_SIM_IDLE_TIMEOUT_SECS", default_value_t = sim::DEFAULT_IDLE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout_secs: u64,

    /// Seconds a reply may wait on its client: an HTTP/2 reply the client's window or its
    /// not reading keeps from being sent is given up (its stream reset); an HTTP/1.1
    /// connection whose client takes none of its reply is closed.
    #[arg(long, env = "LICENSING_SIM_WRITE_TIMEOUT_SECS", default_value_t = sim::DEFAULT_WRITE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    write_timeout_secs: u64,

    /// Connections open at once (lowered to the open-file limit less 64); beyond it a new
    /// connection replaces the longest-idle one, or is closed if every one is busy.
    #[arg(long, env = "LICENSING_SIM_MAX_CONNECTIONS", default_value_t = sim::DEFAULT_MAX_CONNECTIONS, value_parser = at_least_one)]
    max_connections: usize,

    /// MiB of request bodies held in memory at once, across all connections; a body that
    /// does not fit is answered with code 500. One body may be at most 256 MiB or this.
    #[arg(long, env = "LICENSING_SIM_BODY_BUDGET_MIB", default_value_t = sim::DEFAULT_BODY_BUDGET / MIB, value_parser = at_least_one)]
    body_budget_mib: usize,

    /// MiB of replies built and not yet sent held at once, across all connections; a large
    /// admin reply that does not fit is answered 503 with Retry-After.
    #[arg(long, env = "LICENSING_SIM_REPLY_BUDGET_MIB", default_value_t = sim::DEFAULT_REPLY_BUDGET / MIB, value_parser = at_least_one)]
    reply_budget_mib: usize,

    /// Latency added to every request, in milliseconds.
    #[arg(long, env = "LICENSING_SIM_LATENCY_MS", default_value_t = 0)]
    latency_ms: u64,

    /// Probability (0 to 1) of answering code 500 ("network exception, retry").
    #[arg(long, env = "LICENSING_SIM_FAULT_500_RATE", default_value_t = 0.0, value_parser = rate)]
    fault_500_rate: f64,

    /// Probability (0 to 1) of answering code 80001 on the user-center operations.
    #[arg(long, env = "LICENSING_SIM_FAULT_80001_RATE", default_value_t = 0.0, value_parser = rate)]
    fault_80001_rate: f64,

    /// Load a seed at start: a JSON file in the seed format (README "Seeds"), or `demo`
    /// for the built-in demo seed.
    #[arg(long, env = "LICENSING_SIM_SEED", value_name = "FILE|demo")]
    seed: Option<String>,

    /// Token the admin API (/__sandbox/v1/…) requires as `Authorization: Bearer …`.
    /// Needed to listen on a non-loopback address, unless --admin-open.
    #[arg(long, env = "LICENSING_SIM_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,

    /// Serve the admin API without a token on a non-loopback address (anyone who can
    /// reach the port can then reset, import and script faults).
    #[arg(long, env = "LICENSING_SIM_ADMIN_OPEN")]
    admin_open: bool,

    /// Another name the admin API answers to on a loopback address (a container's name),
    /// besides localhost, 127.0.0.1 and [::1]; repeatable, or comma-separated.
    #[arg(
        long = "allowed-host",
        env = "LICENSING_SIM_ALLOWED_HOSTS",
        value_name = "NAME",
        value_delimiter = ','
    )]
    allowed_hosts: Vec<String>,

    /// Bytes of requests and replies the journal keeps at once (the oldest go first).
    #[arg(long, env = "LICENSING_SIM_JOURNAL_MAX_BYTES", value_name = "BYTES", default_value_t = sim::DEFAULT_JOURNAL_BYTES)]
    journal_max_bytes: usize,

    /// Requests the journal keeps, newest last (0: no journal).
    #[arg(long, env = "LICENSING_SIM_JOURNAL_CAPACITY", default_value_t = sim::DEFAULT_JOURNAL_CAPACITY)]
    journal_capacity: usize,

    /// Tenants held at once (POST /__sandbox/v1/tenants past it answers 409); each gets
    /// this share of the records, journal bytes and g_nonces a sandbox may hold.
    #[arg(long, env = "LICENSING_SIM_MAX_TENANTS", default_value_t = sim::DEFAULT_MAX_TENANTS)]
    max_tenants: usize,

    /// Seconds a tenant no request reaches is kept, when its creation does not say.
    #[arg(long, env = "LICENSING_SIM_TENANT_TTL_SECS", default_value_t = sim::DEFAULT_TENANT_TTL.as_secs(), value_parser = clap::value_parser!(u64).range(1..=sim::MAX_TENANT_TTL.as_secs()))]
    tenant_ttl_secs: u64,

    /// Stop (as on SIGTERM) when standard input reaches its end: a parent that starts the
    /// simulator with a pipe for stdin and holds it takes the simulator with it however
    /// it ends, killed included (the Python and Node sandbox packages start it so).
    #[arg(long, env = "LICENSING_SIM_EXIT_ON_STDIN_CLOSE")]
    exit_on_stdin_close: bool,
}

const MIB: usize = 1024 * 1024;

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{s:?} is not a whole number of at least 1")),
    }
}

fn rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("{s:?} is not a probability between 0 and 1")),
    }
}

fn main() -> ExitCode {
    hold_freed_memory();
    serve()
}

#[tokio::main]
async fn serve() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    if args.password_min > args.password_max {
        eprintln!("licensing-sim: --password-min must not exceed --password-max");
        return ExitCode::from(2);
    }
    if !args.addr.ip().is_loopback() && args.admin_token.is_none() && !args.admin_open {
        eprintln!(
            "licensing-sim: refusing to serve the admin API without a token on {}, which \
             other machines may reach: give --admin-token TOKEN, or --admin-open to serve it \
             open on purpose",
            args.addr
        );
        return ExitCode::from(2);
    }
    let mut builder = Simulator::builder();
    if let Some(seed) = &args.seed {
        let parsed = if seed == "demo" {
            Ok(sim::admin::builtin_seed("demo").expect("the demo seed is built in"))
        } else {
            read_seed(seed, args.max_seed_bytes).and_then(|text| sim::admin::parse_seed(&text))
        };
        match parsed {
            Ok(parsed) => builder = builder.seed(parsed),
            Err(e) => {
                eprintln!("licensing-sim: --seed {seed}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some(token) = &args.admin_token {
        builder = builder.admin_token(token);
    }
    for host in &args.allowed_hosts {
        builder = builder.allowed_host(host);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        match TlsConfig::from_files(cert, key) {
            Ok(tls) => builder = builder.tls(tls),
            Err(e) => {
                // The message names the file and what is wrong with it.
                eprintln!("licensing-sim: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some(region) = args.region {
        builder = builder.region(region);
    }
    if let Some(path) = &args.state_file {
        builder = builder.state_file(path);
    }
    let started = builder
        .addr(args.addr)
        .app_token(args.app_token)
        .client_token(args.client_token)
        .user_token(args.user_token)
        .state_log_limit(args.state_log_limit)
        .recover(args.recover)
        .max_records(args.max_enterprises, args.max_employees, args.max_orders)
        .max_string_bytes(args.max_string_bytes)
        .max_seed_bytes(args.max_seed_bytes)
        .max_seed_records(args.max_seed_records)
        .max_import_bytes(args.max_import_bytes)
        .password_length(args.password_min..=args.password_max)
        .trial_member_limit(args.trial_member_limit)
        .nonce_window(Duration::from_secs(args.nonce_window_secs))
        .journal_capacity(args.journal_capacity)
        .journal_max_bytes(args.journal_max_bytes)
        .max_tenants(args.max_tenants)
        .tenant_ttl(Duration::from_secs(args.tenant_ttl_secs))
        .header_timeout(Duration::from_secs(args.header_timeout_secs))
        .body_timeout(Duration::from_secs(args.body_timeout_secs))
        .idle_timeout(Duration::from_secs(args.idle_timeout_secs))
        .write_timeout(Duration::from_secs(args.write_timeout_secs))
        .max_connections(args.max_connections)
        .body_budget(args.body_budget_mib.saturating_mul(MIB))
        .reply_budget(args.reply_budget_mib.saturating_mul(MIB))
        .faults(FaultSettings {
            latency: Duration::from_millis(args.latency_ms),
            rate_500: args.fault_500_rate,
            rate_80001: args.fault_80001_rate,
        })
        .start()
        .await;
    let simulator = match started {
        Ok(simulator) => simulator,
        Err(e) if e.get_ref().is_some_and(|e| e.is::<StateFileError>()) => {
            // The message names the file and what is wrong with it.
            eprintln!("licensing-sim: {e}");
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("licensing-sim: cannot start on {}: {e}", args.addr);
            return ExitCode::FAILURE;
        }
    };
    let stopped = stop_signals();
    let orphaned = stdin_closed(args.exit_on_stdin_close);
    // The one line on stdout: scripts wait for it and read the port from it.
    println!("listening on {}", simulator.url());
    tokio::select! {
        () = stopped => {}
        () = orphaned => tracing::info!("standard input closed"),
    }
    tracing::info!("shutting down");
    match simulator.shutdown().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("licensing-sim: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A seed file's text, refused by its size before it is read.
fn read_seed(path: &str, max: usize) -> Result<String, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    if len > max as u64 {
        return Err(format!(
            "the seed has {len} bytes, more than the {max} a seed may have (raise it with \
             --max-seed-bytes)"
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))
}

/// Ctrl-C, or SIGTERM where there is one, heard from the moment this is called: before
/// the simulator says where it listens, so that a stop sent as soon as it has is a stop
/// (requests in flight finished, the journal written), not the signal's default action.
fn stop_signals() -> std::pin::Pin<Box<dyn Future<Output = ()>>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut interrupt), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            return Box::pin(async move {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = term.recv() => {}
                }
            });
        }
    }
    Box::pin(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// Resolves once standard input reaches its end (or cannot be read), when `watch`; never
/// otherwise. A thread of its own reads it, into nothing, as tokio's stdin would.
fn stdin_closed(watch: bool) -> std::pin::Pin<Box<dyn Future<Output = ()>>> {
    if !watch {
        return Box::pin(std::future::pending());
    }
    let (closed, heard) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        // `io::copy` retries interrupted reads and holds one buffer, whatever is sent.
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = closed.send(());
    });
    Box::pin(async move {
        let _ = heard.await;
    })
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout};

    use super::MiMalloc;

    /// Every layout's alignment is met on either path, zeroed memory is zero, and a
    /// reallocation keeps the bytes, growing and shrinking across the two paths.
    #[test]
    #[allow(unsafe_code)] // the allocator's contract is `unsafe` to call
    fn layouts_are_aligned_zeroed_and_kept_across_reallocation() {
        let sizes = [
            1, 3, 7, 8, 9, 16, 24, 100, 1000, 1025, 1500, 4096, 5000, 70_000,
        ];
        for align in [1, 2, 4, 8, 16, 32, 64, 128, 4096] {
            for size in sizes {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; every block is freed once, with its own layout.
                unsafe {
                    for new_size in [size / 2 + 1, size * 3] {
                        let p = MiMalloc.alloc(layout);
                        assert!(!p.is_null());
                        assert_eq!(p as usize % align, 0, "{size} bytes at {align}");
                        for i in 0..size {
                            p.add(i).write(i as u8);
                        }
                        let q = MiMalloc.realloc(p, layout, new_size);
                        assert!(!q.is_null());
                        assert_eq!(q as usize % align, 0, "{size} -> {new_size} at {align}");
                        for i in 0..size.min(new_size) {
                            assert_eq!(q.add(i).read(), i as u8, "byte {i} of {size}");
                        }
                        MiMalloc.dealloc(q, Layout::from_size_align(new_size, align).unwrap());
                    }
                    let z = MiMalloc.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| z.add(i).read() == 0), "{size} zeroed");
                    MiMalloc.dealloc(z, layout);
                }
            }
        }
    }
}
