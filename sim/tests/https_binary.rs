//! The `licensing-sim` binary over HTTPS, called by the SDK configured only from the
//! environment: `--tls-cert`/`--tls-key` on one side, `SSL_CERT_FILE` and
//! `LICENSING_*` on the other, no code naming the CA. The SDK runs in a child process
//! (this binary again, with `--child`) so that its environment is exactly what the test
//! gives it.

use licensing_test_support::{partner, pki};

use std::process::{Command, Stdio};

use licensing_sim::{DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN};

fn main() {
    if std::env::args().any(|a| a == "--child") {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        if let Err(e) = runtime.block_on(child()) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    parent();
}

/// A partner's program: configuration from the environment, one call per service.
async fn child() -> Result<(), String> {
    let order = licensing_sdk::order::Client::from_env().map_err(|e| e.to_string())?;
    partner::both_services(&order).await
}

fn parent() {
    let pki = pki::Pki::new();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, ca) = (
        dir.path().join("cert.pem"),
        dir.path().join("key.pem"),
        dir.path().join("ca.pem"),
    );
    std::fs::write(&cert, &pki.cert).unwrap();
    std::fs::write(&key, &pki.key).unwrap();
    std::fs::write(&ca, &pki.ca).unwrap();
    let other = dir.path().join("other.pem");
    std::fs::write(&other, pki::Pki::new().ca).unwrap();

    let mut sim = Command::new(env!("CARGO_BIN_EXE_licensing-sim"))
        .args(["--addr", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let line = licensing_test_support::process::first_line(&mut sim);
    let addr = line
        .trim()
        .strip_prefix("listening on https://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let port = addr.rsplit(':').next().unwrap();
    let url = format!("https://localhost:{port}");

    let run = |ca_file: &std::path::Path| {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.arg("--child");
        for name in [
            "SSL_CERT_DIR",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            command.env_remove(name);
        }
        command
            .env("SSL_CERT_FILE", ca_file)
            .env("LICENSING_ORDER_URL", &url)
            .env("LICENSING_APP_TOKEN", DEFAULT_APP_TOKEN)
            .env("LICENSING_MEMBER_URL", &url)
            .env("LICENSING_CLIENT_TOKEN", DEFAULT_CLIENT_TOKEN)
            .env("LICENSING_USER_TOKEN", DEFAULT_USER_TOKEN)
            .env("LICENSING_RETRY", "never")
            .output()
            .unwrap()
    };
    let trusted = run(&ca);
    // Without the CA in SSL_CERT_FILE the same program is refused: the file is what
    // made the difference.
    let untrusted = run(&other);
    let _ = sim.kill();
    let _ = sim.wait();
    drop(dir);

    assert!(
        trusted.status.success(),
        "the SDK over HTTPS with SSL_CERT_FILE: {}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    println!("test from_env_over_https_trusting_ssl_cert_file ... ok");
    let stderr = String::from_utf8_lossy(&untrusted.stderr);
    assert!(
        !untrusted.status.success(),
        "no trusted CA, yet it succeeded"
    );
    assert!(stderr.contains("TLS failure"), "{stderr}");
    println!("test without_the_ca_the_certificate_is_refused ... ok");
    println!("\ntest result: ok. 2 passed");
}
