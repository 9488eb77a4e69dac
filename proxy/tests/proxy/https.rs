//! An HTTPS upstream (real TLS, a CA made at run time): trusted through the CA file as the
//! SDK's `LICENSING_CA_FILE`, refused with a clear error without it.

use licensing_proxy::Proxy;
use licensing_sim::{Simulator, TlsConfig};
use licensing_test_support::pki::Pki;

use super::support::{self, temp_dir};

#[tokio::test]
async fn an_https_upstream_is_trusted_through_the_ca_file_only() {
    let pki = Pki::new();
    let tls = TlsConfig::from_pem(pki.cert.as_bytes(), pki.key.as_bytes()).unwrap();
    let sim = Simulator::builder().tls(tls).start().await.unwrap();
    let upstream = sim.url().replace("127.0.0.1", "localhost");
    assert!(upstream.starts_with("https://"));
    let dir = temp_dir("https");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca).unwrap();
    let report = dir.path().join("report.jsonl");
    let trusted = Proxy::builder(&upstream)
        .ca_file(&ca)
        .report(&report)
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let allocate = |url: String| {
        let body = Some(serde_json::json!({"size": 1}));
        let http = http.clone();
        async move { support::call(&http, &url, "allocateShellNums", &[], &[], body).await }
    };
    let r = allocate(trusted.url()).await;
    assert_eq!((r.status, r.deviations), (200, 0), "{r:?}");
    assert_eq!(r.body["data"][0].as_str().unwrap().len(), 10);

    let untrusted = Proxy::builder(&upstream).start().await.unwrap();
    let r = allocate(untrusted.url()).await;
    assert_eq!(r.status, 502);
    let message = r.body["message"].as_str().unwrap();
    assert!(
        message.contains("cannot be reached") && message.to_lowercase().contains("certificate"),
        "{message}"
    );

    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let e = Proxy::builder(&upstream)
        .ca_file(&not_pem)
        .start()
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("--ca-file") && e.to_string().contains("no PEM certificate"),
        "{e}"
    );
    let e = Proxy::builder("ftp://x").start().await.unwrap_err();
    assert!(e.to_string().contains("--upstream"), "{e}");
}
