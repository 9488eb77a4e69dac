//! HTTPS: the TLS configuration, read from PEM, and the accept loop that serves the router
//! over TLS (HTTP/1.1 and HTTP/2, chosen by ALPN).

use std::{
    fmt, io,
    net::SocketAddr,
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use axum::Router;
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
    service::TowerToHyperService,
};
use rustls::pki_types::{
    CertificateDer, PrivateKeyDer,
    pem::{self, PemObject},
};
use tokio::{
    net::{TcpListener, TcpStream},
    sync::{oneshot, watch},
    task::JoinSet,
};
use tokio_rustls::TlsAcceptor;

/// How long a client has to complete the TLS handshake before its connection is dropped,
/// so a client that connects and sends nothing cannot hold a task forever.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The certificate chain and private key a [`Simulator`](crate::Simulator) serves HTTPS
/// with; set through [`SimulatorBuilder::tls`](crate::SimulatorBuilder::tls).
///
/// Both are PEM: the chain is the server's certificate followed by any intermediates
/// (sections `CERTIFICATE`; other sections are skipped, so one file may hold the chain and
/// the key), the key is the first `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY`
/// section. The server offers TLS 1.3 and 1.2 and negotiates HTTP/2 or HTTP/1.1 by ALPN;
/// it asks for no client certificate. Cryptography is rustls on its `aws-lc-rs` provider,
/// set explicitly, so no process-wide default provider is needed.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use licensing_sim::{Simulator, TlsConfig};
///
/// let tls = TlsConfig::from_files("cert.pem", "key.pem")?;
/// let sim = Simulator::builder().tls(tls).start().await?;
/// assert!(sim.url().starts_with("https://"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct TlsConfig {
    server: Arc<rustls::ServerConfig>,
}

/// The key stays out of logs.
impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig").finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// A configuration from a PEM certificate chain and a PEM private key held in memory.
    ///
    /// # Errors
    /// [`io::ErrorKind::InvalidData`] when either is not valid PEM, holds no certificate or
    /// no private key, or when the key does not match the certificate or is of a type
    /// rustls does not support; the message says which.
    pub fn from_pem(cert_chain: &[u8], key: &[u8]) -> io::Result<Self> {
        Self::parse(
            cert_chain,
            "the certificate chain PEM",
            key,
            "the private key PEM",
        )
    }

    /// Serves any axum `app` over TLS on `listener` with the simulator's own TLS stack,
    /// until the future is dropped: for doubles and benchmarks that need an HTTPS server
    /// beside the simulator.
    pub async fn serve(self, listener: TcpListener, app: Router) -> io::Result<()> {
        // Held for as long as the future lives: dropping it is the only stop signal.
        let (_running, stopped) = oneshot::channel();
        serve(listener, app, self, stopped).await
    }

    /// A configuration from a PEM certificate chain file and a PEM private key file (they
    /// may be the same file).
    ///
    /// # Errors
    /// As [`TlsConfig::from_pem`], and the error of reading a file (its kind kept, e.g.
    /// [`io::ErrorKind::NotFound`]); every message names the file concerned.
    pub fn from_files(cert_chain: impl AsRef<Path>, key: impl AsRef<Path>) -> io::Result<Self> {
        let (cert_chain, key) = (cert_chain.as_ref(), key.as_ref());
        let read = |path: &Path| {
            std::fs::read(path).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
            })
        };
        Self::parse(
            &read(cert_chain)?,
            &cert_chain.display().to_string(),
            &read(key)?,
            &key.display().to_string(),
        )
    }

    /// Parses both PEMs; `cert_source` and `key_source` name them in errors.
    fn parse(
        cert_chain: &[u8],
        cert_source: &str,
        key: &[u8],
        key_source: &str,
    ) -> io::Result<Self> {
        let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidData, message);
        let certs = CertificateDer::pem_slice_iter(cert_chain)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(format!("invalid PEM in {cert_source}: {}", pem_problem(&e))))?;
        if certs.is_empty() {
            return Err(invalid(format!("no certificate found in {cert_source}")));
        }
        let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| match e {
            pem::Error::NoItemsFound => invalid(format!("no private key found in {key_source}")),
            e => invalid(format!("invalid PEM in {key_source}: {}", pem_problem(&e))),
        })?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| io::Error::other(format!("TLS protocol versions: {e}")))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| match e {
                rustls::Error::InconsistentKeys(_) => invalid(format!(
                    "the private key in {key_source} does not match the certificate in \
                     {cert_source}"
                )),
                e => invalid(format!(
                    "cannot use the certificate in {cert_source} with the private key in \
                     {key_source}: {e}"
                )),
            })?;
        server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            server: Arc::new(server),
        })
    }
}

/// A PEM parsing error in words (the library's own `Display` shows lines as byte arrays).
fn pem_problem(e: &pem::Error) -> String {
    match e {
        pem::Error::MissingSectionEnd { end_marker } => format!(
            "a section is not closed (no \"-----END {}-----\" line)",
            String::from_utf8_lossy(end_marker)
        ),
        pem::Error::IllegalSectionStart { line } => format!(
            "malformed section start {:?}",
            String::from_utf8_lossy(line)
        ),
        pem::Error::Base64Decode(e) => format!("a section is not valid base64 ({e})"),
        e => e.to_string(),
    }
}

/// Serves `app` over TLS on `listener` until `stopped` resolves (or its sender is dropped):
/// then stops accepting, lets every connection finish its requests in flight, and returns.
///
/// One task per connection, held in a set owned by this future, so aborting it ends every
/// connection too. A connection whose handshake fails or times out is logged at debug and
/// dropped; it never holds up the accept loop.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    tls: TlsConfig,
    mut stopped: oneshot::Receiver<()>,
) -> io::Result<()> {
    let acceptor = TlsAcceptor::from(tls.server);
    // Connections watch this; it changes (or closes) when the server stops.
    let (shutdown, watched) = watch::channel(());
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            // A dropped sender stops the server as well.
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    connections.spawn(connection(
                        tcp,
                        peer,
                        acceptor.clone(),
                        app.clone(),
                        watched.clone(),
                    ));
                }
                Err(e) => accept_failed(e).await,
            },
            // Reap finished connections so the set does not grow without bound.
            Some(done) = connections.join_next(), if !connections.is_empty() => {
                if let Err(e) = done {
                    tracing::warn!(error = %e, "a connection task failed");
                }
            }
        }
    }
    drop(listener);
    let _ = shutdown.send(());
    let started = Instant::now();
    while let Some(done) = connections.join_next().await {
        if let Err(e) = done {
            tracing::warn!(error = %e, "a connection task failed");
        }
    }
    tracing::debug!(waited = ?started.elapsed(), "TLS server stopped");
    Ok(())
}

/// As `axum::serve` does: errors of one connection (refused, aborted, reset) are skipped;
/// others (such as too many open files) are logged and accepting pauses for a second.
async fn accept_failed(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        tracing::debug!(error = %e, "accept failed");
        return;
    }
    tracing::error!(error = %e, "accept failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// One connection: the TLS handshake (bounded by [`HANDSHAKE_TIMEOUT`]), then HTTP/1.1 or
/// HTTP/2 until the client closes it or, on shutdown, its requests in flight are done.
async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    app: Router,
    mut shutdown: watch::Receiver<()>,
) {
    // TLS sends several small records per flight; Nagle's algorithm would delay them.
    let _ = tcp.set_nodelay(true);
    let stream = tokio::select! {
        handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)) => {
            match handshake {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed; connection dropped");
                    return;
                }
                Err(_) => {
                    tracing::debug!(
                        %peer,
                        timeout = ?HANDSHAKE_TIMEOUT,
                        "TLS handshake timed out; connection dropped"
                    );
                    return;
                }
            }
        }
        // No request is in flight before the handshake ends: nothing to wait for.
        _ = shutdown.changed() => return,
    };
    let builder = auto::Builder::new(TokioExecutor::new());
    let conn =
        builder.serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(app));
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        _ = shutdown.changed() => {
            // Finish the requests in flight, take no new ones, then close.
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}
