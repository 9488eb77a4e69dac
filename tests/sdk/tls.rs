//! HTTPS against the simulator with certificates made at run time: a private CA added
//! through the builder, a missing CA, a host name the certificate does not cover, and a
//! tunnelling proxy. Real TLS on loopback, no mock of it.

use std::time::{Duration, Instant};

use licensing_sdk::{Error, RetryPolicy, member, order};
use licensing_sim::{
    DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN, Simulator, TlsConfig,
};

use crate::{common::*, pki::Pki, proxy::ConnectProxy};

async fn https_simulator(pki: &Pki) -> Simulator {
    Simulator::builder()
        .tls(TlsConfig::from_pem(pki.cert.as_bytes(), pki.key.as_bytes()).unwrap())
        .start()
        .await
        .unwrap()
}

fn base(sim: &Simulator, host: &str) -> String {
    format!("https://{host}:{}", sim.addr().port())
}

async fn allocate(client: &order::Client) -> Result<Vec<order::types::ShellNumber>, Error> {
    client
        .allocate_shell_nums()
        .body(order::types::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
        .await
}

#[tokio::test]
async fn with_the_ca_added_both_services_answer_over_https() {
    let pki = Pki::new();
    let sim = https_simulator(&pki).await;
    let url = base(&sim, "localhost");
    let order = order::Client::builder(&url)
        .application_token(DEFAULT_APP_TOKEN)
        .add_ca_certificate_pem(&pki.ca)
        .build()
        .unwrap();
    let numbers = allocate(&order).await.expect("an HTTPS call");
    assert_eq!(numbers[0].len(), 10);

    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &pki.ca).unwrap();
    let member = member::Client::builder(&url)
        .client_token(DEFAULT_CLIENT_TOKEN)
        .user_token(DEFAULT_USER_TOKEN)
        .add_ca_certificate_file(file.path())
        .build()
        .unwrap();
    drop(file);
    let page = member
        .list_members()
        .enterprise_global_id("EG-none")
        .page_num(1u32)
        .page_size(10u32)
        .await
        .expect("an HTTPS call");
    assert!(page.list.is_empty());
}

#[tokio::test]
async fn an_untrusted_certificate_fails_fast_and_is_not_retried() {
    let pki = Pki::new();
    let sim = https_simulator(&pki).await;
    let (asked, provider) = counting_provider(DEFAULT_APP_TOKEN);
    let client = order::Client::builder(&base(&sim, "localhost"))
        .application_token_provider(provider)
        .retry(fast_retry(4))
        .build()
        .unwrap();
    let started = Instant::now();
    match allocate(&client).await {
        Err(e @ Error::Tls { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("not signed by a trusted certificate authority"),
                "{text}"
            );
            assert!(text.contains("was not sent"), "{text}");
            assert_eq!(e.kind_name(), "tls");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        asked.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one attempt"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_host_name_the_certificate_does_not_cover_is_reported_as_such() {
    let pki = Pki::for_names(&["localhost"]);
    let sim = https_simulator(&pki).await;
    let client = order::Client::builder(&base(&sim, "127.0.0.1"))
        .application_token(DEFAULT_APP_TOKEN)
        .add_ca_certificate_pem(&pki.ca)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    match allocate(&client).await {
        Err(Error::Tls { reason, .. }) => {
            assert!(reason.contains("not valid for the host name"), "{reason}");
            // rustls also names what the certificate covers; OpenSSL does not.
            if cfg!(not(feature = "native-tls")) {
                assert!(reason.contains("localhost"), "{reason}");
            }
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_explicit_proxy_tunnels_the_calls() {
    let pki = Pki::new();
    let sim = https_simulator(&pki).await;
    let proxy = ConnectProxy::start().await;
    let client = order::Client::builder(&base(&sim, "localhost"))
        .application_token(DEFAULT_APP_TOKEN)
        .add_ca_certificate_pem(&pki.ca)
        .proxy(&proxy.url)
        .build()
        .unwrap();
    allocate(&client).await.expect("through the proxy");
    assert_eq!(
        proxy.targets(),
        [format!("localhost:{}", sim.addr().port())]
    );

    let direct = order::Client::builder(&base(&sim, "localhost"))
        .application_token(DEFAULT_APP_TOKEN)
        .add_ca_certificate_pem(&pki.ca)
        .no_proxy()
        .build()
        .unwrap();
    allocate(&direct).await.expect("directly");
    assert_eq!(proxy.targets().len(), 1, "no_proxy() bypassed it");
}
