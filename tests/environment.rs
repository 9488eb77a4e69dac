//! What the SDK reads from the process environment: `SSL_CERT_FILE`, `HTTPS_PROXY`,
//! `NO_PROXY` and `from_env()`'s `LICENSING_*` variables. Each scenario runs in a child
//! process started with exactly the variables it needs (this binary again, with
//! `--child NAME`), so no test changes the environment of a running process.
//!
//! The parent serves the simulator over HTTPS with a CA made at run time, and a
//! tunnelling proxy, and checks what each child did.

use std::{path::PathBuf, process::Command, time::Duration};

use licensing_sdk::{Error, order};
use licensing_sim::{
    DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN, Simulator, TlsConfig,
};
use licensing_test_support::{partner, pki, proxy};

/// Variables a child must not inherit: its scenario sets what it needs.
const INHERITED: &[&str] = &[
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    match args.iter().position(|a| a == "--child") {
        Some(at) => {
            let scenario = args[at + 1].clone();
            if let Err(e) = runtime.block_on(child(&scenario)) {
                eprintln!("{scenario}: {e}");
                std::process::exit(1);
            }
        }
        None => runtime.block_on(parent()),
    }
}

// ------------------------------------------------------------------------------ children

async fn child(scenario: &str) -> Result<(), String> {
    let order = match scenario {
        "builder_no_proxy" => order::Client::builder_from_env().and_then(|b| b.no_proxy().build()),
        _ => order::Client::from_env(),
    }
    .map_err(|e| e.to_string())?;
    if scenario != "untrusted" {
        return partner::both_services(&order).await;
    }
    match partner::allocate_one(&order).await {
        Err(Error::Tls { reason, .. })
            if reason.contains("not signed by a trusted certificate authority") =>
        {
            Ok(())
        }
        other => Err(format!(
            "expected an untrusted-issuer TLS error, got {other:?}"
        )),
    }
}

// ------------------------------------------------------------------------------ parent

struct Setup {
    url: String,
    bundle: PathBuf,
    other_ca: PathBuf,
    proxy: proxy::ConnectProxy,
    port: u16,
}

fn run(setup: &Setup, scenario: &str, vars: &[(&str, &str)]) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--child", scenario]);
    for name in INHERITED {
        command.env_remove(name);
    }
    command
        .env("LICENSING_ORDER_URL", &setup.url)
        .env("LICENSING_APP_TOKEN", DEFAULT_APP_TOKEN)
        .env("LICENSING_MEMBER_URL", &setup.url)
        .env("LICENSING_CLIENT_TOKEN", DEFAULT_CLIENT_TOKEN)
        .env("LICENSING_USER_TOKEN", DEFAULT_USER_TOKEN)
        .env("LICENSING_RETRY", "never")
        .env("LICENSING_TIMEOUT", "10s");
    for (name, value) in vars {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scenario {scenario} failed: {stderr}");
    println!("test {scenario} ... ok");
}

async fn parent() {
    let pki = pki::Pki::new();
    let sim = Simulator::builder()
        .tls(TlsConfig::from_pem(pki.cert.as_bytes(), pki.key.as_bytes()).unwrap())
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A bundle as OpenSSL reads it: another CA first, then ours.
    let other = pki::Pki::new().ca;
    let bundle = dir.path().join("bundle.pem");
    std::fs::write(&bundle, format!("{other}{}", pki.ca)).unwrap();
    let other_ca = dir.path().join("other.pem");
    std::fs::write(&other_ca, &other).unwrap();
    let port = sim.addr().port();
    let setup = Setup {
        url: format!("https://localhost:{port}"),
        bundle,
        other_ca,
        proxy: proxy::ConnectProxy::start().await,
        port,
    };
    let bundle = setup.bundle.display().to_string();
    let target = format!("localhost:{}", setup.port);
    // The children block on their own; the simulator and proxy serve them meanwhile.
    let setup = std::sync::Arc::new(setup);
    let s = setup.clone();
    tokio::task::spawn_blocking(move || {
        let proxy = s.proxy.url.clone();
        let other_ca = s.other_ca.display().to_string();

        run(&s, "ssl_cert_file", &[("SSL_CERT_FILE", &bundle)]);
        assert!(s.proxy.targets().is_empty());

        run(&s, "untrusted", &[("SSL_CERT_FILE", &other_ca)]);

        run(
            &s,
            "https_proxy",
            &[("SSL_CERT_FILE", &bundle), ("HTTPS_PROXY", &proxy)],
        );
        // One tunnel per client: the order call, then the member call.
        assert_eq!(s.proxy.targets(), [target.clone(), target.clone()]);

        run(
            &s,
            "no_proxy",
            &[
                ("SSL_CERT_FILE", &bundle),
                ("HTTPS_PROXY", &proxy),
                ("NO_PROXY", "localhost"),
            ],
        );
        run(
            &s,
            "builder_no_proxy",
            &[("SSL_CERT_FILE", &bundle), ("HTTPS_PROXY", &proxy)],
        );
        // The member client of builder_no_proxy used the environment's proxy.
        assert_eq!(s.proxy.targets().len(), 3, "{:?}", s.proxy.targets());
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    drop(dir);
    println!("\ntest result: ok. 5 scenarios passed");
}
