//! What a program is served with: a [`Host`] (its address, bounds and TLS, then its
//! handler), the admin checks of its `/__sandbox/` routes ([`AdminChecks`]), and a console
//! of its own pages ([`Console`], with the feature `console`).

#[cfg(feature = "console")]
mod console;

use std::{
    fmt, io,
    net::{Ipv4Addr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use axum::{
    body::Body,
    http::{Response, request::Parts},
};
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};

#[cfg(feature = "console")]
pub use console::{Console, ConsoleBuilder, ConsolePage};

use crate::{
    admin::AdminAccess,
    server::{self, Handler, Limits, ServerStats, TlsConfig},
};

/// Where a [`Host`] listens and what it bounds; see [`Host::builder`]. The defaults are
/// the simulator's.
#[derive(Debug)]
#[must_use]
pub struct HostBuilder {
    addr: SocketAddr,
    tls: Option<TlsConfig>,
    limits: Limits,
}

impl HostBuilder {
    /// Address to listen on (default `127.0.0.1:0`, a free port).
    pub fn addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// Serve HTTPS with this certificate and key (HTTP/2 or HTTP/1.1 by ALPN).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Time a client has to send a request's headers (and to finish the TLS handshake).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_timeout = timeout;
        self
    }

    /// Time a request's body may take to arrive after its headers; past it the handler is
    /// given the body's failure.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_timeout = timeout;
        self
    }

    /// Time a connection may stay open without a request after a reply.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout;
        self
    }

    /// Time a reply may wait on its client before it is given up.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.limits.write_timeout = timeout;
        self
    }

    /// Connections open at once (at least one; lowered to fit the open-file limit).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.limits.max_connections = n.max(1);
        self
    }

    /// Bytes of request bodies held at once across connections (at least one).
    pub fn body_budget(mut self, bytes: usize) -> Self {
        self.limits.body_budget = bytes.max(1);
        self
    }

    /// Bytes of replies built and not yet sent held at once across connections (at least
    /// one).
    pub fn reply_budget(mut self, bytes: usize) -> Self {
        self.limits.reply_budget = bytes.max(1);
        self
    }

    /// Binds the address. Serving starts with [`Listening::serve`], once what the handler
    /// needs of the address (its port, for [`AdminChecks`]) is known.
    ///
    /// # Errors
    /// The address cannot be bound (in use, not this machine's).
    pub async fn bind(self) -> io::Result<Listening> {
        let listener = TcpListener::bind(self.addr).await?;
        let addr = listener.local_addr()?;
        Ok(Listening {
            listener,
            addr,
            tls: self.tls,
            limits: self.limits,
        })
    }
}

/// A bound address, not yet served.
#[derive(Debug)]
pub struct Listening {
    listener: TcpListener,
    addr: SocketAddr,
    tls: Option<TlsConfig>,
    limits: Limits,
}

impl Listening {
    /// The address bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// The base URL clients use: `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme(), self.addr)
    }

    /// Starts serving `handler` on the current Tokio runtime.
    pub fn serve<H: Handler>(self, handler: H) -> Host {
        let scheme = self.scheme();
        let server = Arc::new(server::Server::new(self.limits));
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(server::serve(
            self.listener,
            handler,
            self.tls.map(|t| t.acceptor()),
            Arc::clone(&server),
            stopped,
        ));
        Host {
            addr: self.addr,
            scheme,
            server,
            stop: Some(stop),
            task: Some(task),
        }
    }
}

/// A running server; stopped by [`Host::shutdown`] or when dropped.
pub struct Host {
    addr: SocketAddr,
    scheme: &'static str,
    server: Arc<server::Server>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Host")
            .field("addr", &self.addr)
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A builder with the simulator's defaults, on `127.0.0.1:0`.
    pub fn builder() -> HostBuilder {
        HostBuilder {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            tls: None,
            limits: Limits::default(),
        }
    }

    /// The base URL clients use.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What its limits have done so far.
    pub fn stats(&self) -> ServerStats {
        self.server.stats()
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
                task.abort();
                Ok(())
            }
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The simulator's admin checks, for the admin routes and console of a listener: on a
/// loopback address `Host` must name it (`localhost`, `127.0.0.1` or `[::1]` with its port,
/// or an allowed name); a change from a web page must come from the listener's own origin;
/// an admin body must be JSON; and with an admin token, every request must carry it
/// (`Authorization: Bearer …`) or a session opened by signing in on the program's console.
#[derive(Clone)]
pub struct AdminChecks(pub(crate) AdminAccess);

/// The token stays out of logs.
impl fmt::Debug for AdminChecks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdminChecks")
            .field("token", &self.0.token.as_ref().map(|_| "[REDACTED]"))
            .field("loopback_port", &self.0.loopback_port)
            .field("allowed_hosts", &self.0.allowed_hosts)
            .finish_non_exhaustive()
    }
}

impl AdminChecks {
    /// The checks for `listening`, requiring `token` when given, and answering to
    /// `allowed_hosts` (any port) besides the loopback names.
    pub fn new(listening: &Listening, token: Option<String>, allowed_hosts: Vec<String>) -> Self {
        let addr = listening.addr();
        Self(AdminAccess {
            token,
            loopback_port: addr.ip().is_loopback().then_some(addr.port()),
            scheme: listening.scheme(),
            allowed_hosts,
            ..AdminAccess::default()
        })
    }

    /// The refusal of a request to an admin route (`{"message"}` with `401`, `403` or
    /// `415`), or `None` to let it through.
    pub fn refusal(&self, parts: &Parts) -> Option<Response<Body>> {
        self.0.refusal(parts)
    }
}
