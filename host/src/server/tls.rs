//! HTTPS: the TLS configuration, read from PEM. The accept loop that serves it is the
//! plain one's (`mod.rs`), with the same limits.

use std::{fmt, io, path::Path, sync::Arc};

use axum::Router;
use rustls::pki_types::{
    CertificateDer, PrivateKeyDer,
    pem::{self, PemObject},
};
use tokio::{net::TcpListener, sync::oneshot};
use tokio_rustls::TlsAcceptor;

/// The certificate chain and private key a server serves HTTPS with; set through
/// [`HostBuilder::tls`](crate::HostBuilder::tls) (and the simulator's builder, which
/// re-exports it as `licensing_sim::TlsConfig`).
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
/// use licensing_host::{Host, TlsConfig};
///
/// let tls = TlsConfig::from_files("cert.pem", "key.pem")?;
/// let listening = Host::builder().tls(tls).bind().await?;
/// assert!(listening.url().starts_with("https://"));
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
    ///
    /// The server has the default limits (the `DEFAULT_…` constants).
    pub async fn serve(self, listener: TcpListener, app: Router) -> io::Result<()> {
        // Held for as long as the future lives: dropping it is the only stop signal.
        let (_running, stopped) = oneshot::channel();
        let server = Arc::new(super::Server::new(Default::default()));
        super::serve(listener, app, Some(self.acceptor()), server, stopped).await
    }

    /// The acceptor that performs the server's side of the handshake ([`serve`](super::serve)
    /// takes it).
    #[doc(hidden)]
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.server))
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
