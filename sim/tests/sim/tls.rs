//! HTTPS: the simulator serving real TLS with certificates made at run time (a private CA
//! and a leaf for `localhost` and `127.0.0.1`), in-process and as the binary.

use std::{
    io::{BufRead, BufReader, Write as _},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

use licensing_sdk::{
    RetryPolicy,
    operations::{self, Service},
    order,
    order::types as ot,
};
use licensing_sim::{DEFAULT_APP_TOKEN, FaultSettings, Simulator, TlsConfig};
use serde_json::{Value, json};

/// How long any one request may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(15);

use crate::pki::Pki;

/// The simulator's side of a test PKI.
trait Serve {
    fn tls(&self) -> TlsConfig;
    async fn start(&self) -> Simulator;
}

impl Serve for Pki {
    fn tls(&self) -> TlsConfig {
        TlsConfig::from_pem(self.cert.as_bytes(), self.key.as_bytes()).expect("a valid TLS config")
    }

    /// A simulator serving HTTPS with this PKI's certificate.
    async fn start(&self) -> Simulator {
        Simulator::builder()
            .tls(self.tls())
            .start()
            .await
            .expect("the simulator starts")
    }
}

/// An HTTPS client that trusts only `ca` (no system roots).
fn client_trusting(ca: &str) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.as_bytes()).unwrap()])
        .timeout(PATIENCE)
}

/// `allocateShellNums` for one number, with the order service's credentials and a fresh
/// `g_nonce`; the path and method come from the SDK's operation table.
async fn allocate(
    client: &reqwest::Client,
    base_url: &str,
) -> Result<reqwest::Response, reqwest::Error> {
    let op = operations::find("allocateShellNums").expect("allocateShellNums in the table");
    assert_eq!(op.service, Service::Order);
    let url = format!(
        "{base_url}{}?g_nonce={}",
        op.path_with(&[]),
        licensing_sdk::runtime::nonce()
    );
    client
        .request(op.method.as_str().parse().unwrap(), url)
        .bearer_auth(DEFAULT_APP_TOKEN)
        .json(&json!({ "size": 1 }))
        .send()
        .await
}

/// Asserts the reply is a successful `allocateShellNums` of one number.
async fn assert_allocated(response: reqwest::Response) {
    assert_eq!(response.status(), 200, "{response:?}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], json!(0), "{body}");
    let numbers = body["data"].as_array().expect("a list of numbers");
    assert_eq!(numbers.len(), 1, "{body}");
    assert_eq!(numbers[0].as_str().map(str::len), Some(10), "{body}");
}

/// Whether rustls rejected the server's certificate as signed by an unknown CA, anywhere in
/// the error's chain. (An `io::Error` skips the error it wraps in `source()`, giving that
/// error's source instead, so the chain is followed through `get_ref()` there.)
fn is_unknown_issuer(error: &reqwest::Error) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)) =
            e.downcast_ref::<rustls::Error>()
        {
            return true;
        }
        next = match e.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => e.source(),
        };
    }
    false
}

#[tokio::test]
async fn a_client_trusting_the_ca_is_answered_over_http2_and_http1() {
    let pki = Pki::new();
    let sim = pki.start().await;
    assert!(sim.is_tls());
    assert_eq!(sim.url(), format!("https://{}", sim.addr()));

    // ALPN offers h2 first, and a client able to speak it gets it.
    let h2 = client_trusting(&pki.ca).build().unwrap();
    let response = allocate(&h2, &sim.url()).await.expect("an HTTPS answer");
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_allocated(response).await;

    let h1 = client_trusting(&pki.ca).http1_only().build().unwrap();
    let response = allocate(&h1, &sim.url()).await.expect("an HTTPS answer");
    assert_eq!(response.version(), reqwest::Version::HTTP_11);
    assert_allocated(response).await;

    // The name in the certificate, not only the address, is accepted.
    let by_name = sim.url().replace("127.0.0.1", "localhost");
    assert_allocated(
        allocate(&h1, &by_name)
            .await
            .expect("an answer for localhost"),
    )
    .await;
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_sdk_calls_the_simulator_over_https() {
    let pki = Pki::new();
    let sim = pki.start().await;
    let client = order::Client::builder(&sim.url())
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::Never)
        .http_client(client_trusting(&pki.ca).build().unwrap())
        .build()
        .unwrap();
    let numbers = client
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::new(3).unwrap()))
        .await
        .expect("allocateShellNums over HTTPS");
    assert_eq!(numbers.len(), 3);
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_client_not_trusting_the_ca_fails_with_a_certificate_error() {
    let pki = Pki::new();
    let sim = pki.start().await;
    // Trusts a CA of its own, not the one that signed the simulator's certificate.
    let stranger = client_trusting(&Pki::new().ca).build().unwrap();
    let error = allocate(&stranger, &sim.url())
        .await
        .expect_err("an untrusted certificate is refused");
    assert!(error.is_connect(), "{error:?}");
    assert!(
        is_unknown_issuer(&error),
        "not a certificate error: {error:?}"
    );

    // The failed handshake left the server serving.
    let trusting = client_trusting(&pki.ca).build().unwrap();
    assert_allocated(allocate(&trusting, &sim.url()).await.unwrap()).await;
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn plain_http_and_silent_clients_do_not_stall_the_tls_port() {
    let pki = Pki::new();
    let sim = pki.start().await;
    let addr = sim.addr();

    // A client that connects and says nothing: its handshake waits, the others do not.
    let silent = tokio::net::TcpStream::connect(addr).await.unwrap();

    // Plain HTTP to the TLS port: refused quickly, not left hanging.
    let plain = reqwest::Client::builder()
        .timeout(PATIENCE)
        .build()
        .unwrap();
    let plain_url = sim.url().replacen("https://", "http://", 1);
    let started = std::time::Instant::now();
    let refused = allocate(&plain, &plain_url).await;
    assert!(
        refused.as_ref().map_or(true, |r| !r.status().is_success()),
        "plain HTTP was served on the TLS port: {refused:?}"
    );
    assert!(
        refused.as_ref().err().is_none_or(|e| !e.is_timeout()),
        "plain HTTP hung: {refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // Raw bytes that are no TLS record at all.
    {
        let mut garbage = std::net::TcpStream::connect(addr).unwrap();
        garbage
            .write_all(b"GET / HTTP/1.0\r\n\r\n\x16\x03\x01\xff\xff")
            .unwrap();
    }

    let trusting = client_trusting(&pki.ca).build().unwrap();
    let started = std::time::Instant::now();
    assert_allocated(allocate(&trusting, &sim.url()).await.unwrap()).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a good request waited {:?}",
        started.elapsed()
    );

    // The silent client, still in its handshake, does not hold up the shutdown either.
    let stopping = std::time::Instant::now();
    sim.shutdown().await.unwrap();
    assert!(
        stopping.elapsed() < Duration::from_secs(2),
        "shutdown waited {:?} for a handshake",
        stopping.elapsed()
    );
    drop(silent);
}

#[tokio::test]
async fn shutdown_lets_https_requests_in_flight_finish() {
    let pki = Pki::new();
    let sim = Simulator::builder()
        .tls(pki.tls())
        .faults(FaultSettings {
            latency: Duration::from_millis(500),
            ..FaultSettings::default()
        })
        .start()
        .await
        .unwrap();
    let url = sim.url();
    let mut in_flight = Vec::new();
    for client in [
        client_trusting(&pki.ca).build().unwrap(),
        client_trusting(&pki.ca).http1_only().build().unwrap(),
    ] {
        let url = url.clone();
        in_flight.push(tokio::spawn(async move { allocate(&client, &url).await }));
    }
    // Both requests are under way (each waits out the latency) when the server stops.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let stopping = std::time::Instant::now();
    sim.shutdown().await.unwrap();
    // Well under the five seconds after which `shutdown` gives up waiting.
    assert!(
        stopping.elapsed() < Duration::from_secs(4),
        "shutdown waited {:?}",
        stopping.elapsed()
    );
    for request in in_flight {
        let response = request
            .await
            .unwrap()
            .expect("the request in flight finished");
        assert_allocated(response).await;
    }
    // Nothing listens any more.
    let after = client_trusting(&pki.ca).build().unwrap();
    let error = allocate(&after, &url).await.expect_err("stopped");
    assert!(error.is_connect(), "{error:?}");
}

#[test]
fn tls_config_errors_name_the_file_and_the_problem() {
    let pki = Pki::new();
    let dir = TempDir::new();
    let cert = dir.write("cert.pem", &pki.cert);
    let key = dir.write("key.pem", &pki.key);
    let both = dir.write("both.pem", &format!("{}{}", pki.cert, pki.key));
    let garbage = dir.write(
        "garbage.pem",
        "-----BEGIN CERTIFICATE-----\nnot base64 !\n-----END CERTIFICATE-----\n",
    );
    let unclosed = dir.write("unclosed.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n");
    let other_key = dir.write("other-key.pem", &Pki::new().key);
    let missing = dir.path().join("missing.pem");

    TlsConfig::from_files(&cert, &key).expect("separate files");
    TlsConfig::from_files(&both, &both).expect("one file holding both");

    let message = |result: std::io::Result<TlsConfig>| {
        let e = result.expect_err("an error");
        (e.kind(), e.to_string())
    };
    let (kind, text) = message(TlsConfig::from_files(&cert, &missing));
    assert_eq!(kind, std::io::ErrorKind::NotFound);
    assert!(text.contains(&missing.display().to_string()), "{text}");
    assert!(text.starts_with("cannot read "), "{text}");

    let cases = [
        (
            &cert,
            &cert,
            format!("no private key found in {}", cert.display()),
        ),
        (
            &key,
            &key,
            format!("no certificate found in {}", key.display()),
        ),
        (
            &garbage,
            &key,
            format!("invalid PEM in {}", garbage.display()),
        ),
        (
            &cert,
            &unclosed,
            format!("invalid PEM in {}", unclosed.display()),
        ),
        (
            &cert,
            &other_key,
            format!(
                "the private key in {} does not match the certificate in {}",
                other_key.display(),
                cert.display()
            ),
        ),
    ];
    for (cert, key, expected) in cases {
        let (kind, text) = message(TlsConfig::from_files(cert, key));
        assert_eq!(kind, std::io::ErrorKind::InvalidData, "{text}");
        assert!(
            text.starts_with(&expected),
            "{text:?} should start with {expected:?}"
        );
    }

    let (_, text) = message(TlsConfig::from_pem(pki.cert.as_bytes(), b""));
    assert_eq!(text, "no private key found in the private key PEM");
    let (_, text) = message(TlsConfig::from_pem(b"", pki.key.as_bytes()));
    assert_eq!(text, "no certificate found in the certificate chain PEM");
}

#[tokio::test]
async fn the_binary_serves_https_with_tls_flags() {
    let pki = Pki::new();
    let dir = TempDir::new();
    let cert = dir.write("cert.pem", &pki.cert);
    let key = dir.write("key.pem", &pki.key);
    let mut child = Running(
        binary()
            .args(["--addr", "127.0.0.1:0", "--tls-cert"])
            .arg(&cert)
            .arg("--tls-key")
            .arg(&key)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts"),
    );
    let line = first_line(&mut child.0);
    let url = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    assert!(url.starts_with("https://"), "{line:?}");
    let client = client_trusting(&pki.ca).build().unwrap();
    assert_allocated(allocate(&client, url).await.expect("an HTTPS answer")).await;
}

#[test]
fn the_binary_refuses_bad_tls_flags() {
    let pki = Pki::new();
    let dir = TempDir::new();
    let cert = dir.write("cert.pem", &pki.cert);
    let missing = dir.path().join("no-such-key.pem");

    let output = binary()
        .args(["--addr", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&missing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    assert!(stderr.contains(&missing.display().to_string()), "{stderr}");

    // A key file that holds no key: the file and the problem are named.
    let output = binary()
        .args(["--addr", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&cert)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{output:?}");
    assert!(
        stderr.contains(&format!("no private key found in {}", cert.display())),
        "{stderr}"
    );

    // One flag without the other is a usage error.
    let output = binary()
        .args(["--addr", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(stderr.contains("--tls-key"), "{stderr}");
}

/// The `licensing-sim` binary, free of any `LICENSING_SIM_*` setting of the environment
/// the tests run in.
fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_licensing-sim"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("LICENSING_SIM_") {
            command.env_remove(name);
        }
    }
    command.stdin(Stdio::null());
    command
}

/// A child process killed when dropped, so a failing test leaves none behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The child's first line on stdout, waiting at most [`PATIENCE`] (a build machine under
/// load can be slow to start a process).
fn first_line(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line).map(|_| line);
        let _ = tx.send(read);
    });
    let line = rx
        .recv_timeout(PATIENCE)
        .expect("the binary prints its address in time")
        .expect("stdout is readable");
    line.trim_end().to_string()
}

/// A temporary directory the tests write their PEM files into, removed when dropped.
struct TempDir(tempfile::TempDir);

impl TempDir {
    fn new() -> Self {
        Self(tempfile::tempdir().unwrap())
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}
