//! The protocol around every operation: the envelope and its HTTP statuses, credentials,
//! `g_nonce` replay protection, fault injection, and the `licensing-sim` binary.

use std::time::{Duration, Instant};

use crate::support::{code_of, path, start, start_with, with_enterprise};
use licensing_sdk::{ErrorCode, order, order::types as ot};
use licensing_sim::{FaultSettings, Simulator};
use serde_json::json;

const APP: (&str, &str) = ("Authorization", "Bearer sim-app-token");
const CLIENT: (&str, &str) = ("Authorization", "Bearer sim-client-token");
const CLIENT_TOKEN: (&str, &str) = ("clientToken", "sim-client-token");
const USER_TOKEN: (&str, &str) = ("userToken", "sim-user-token");

/// An order-service operation with a body and no path parameters.
fn shellnums() -> String {
    path("allocateShellNums", &[])
}

/// A member-center operation without a body, for an enterprise that does not exist.
fn asset_nums() -> String {
    path("listAssetNums", &["EG"])
}

#[tokio::test]
async fn success_is_http_200_with_code_0_and_errors_http_299_with_a_string_code() {
    let shellnums = shellnums();
    let env = start().await;
    let ok = env
        .raw("POST", &shellnums, Some(json!({ "size": 2 })))
        .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["code"], json!(0), "an integer 0");
    assert_eq!(ok.body["message"], "success");
    assert_eq!(ok.body["data"], json!(["8000000001", "8000000002"]));
    assert!(ok.body.get("cause").is_none());

    let err = env
        .raw("POST", &shellnums, Some(json!({ "size": 0 })))
        .await;
    assert_eq!(err.status, 299);
    assert_eq!(err.body["code"], json!("13004"), "a string");
    assert!(
        err.body["message"]
            .as_str()
            .unwrap()
            .starts_with("parameter validation failure")
    );
    assert!(err.body["cause"].is_string());
    assert!(err.body.get("data").is_none());

    // Member operations without data answer `data: null`.
    let ent = env.enterprise("Acme").await;
    let raw = env
        .raw(
            "POST",
            &path("configureMemberAssets", &[&ent.members[0]]),
            Some(json!({ "deleteAssets": [], "addAssets": [] })),
        )
        .await;
    assert_eq!((raw.status, &raw.body["data"]), (200, &json!(null)));
}

#[tokio::test]
async fn undocumented_methods_and_paths_are_left_to_http() {
    let shellnums = shellnums();
    let env = start().await;
    let wrong_method = env.raw("GET", &shellnums, None).await;
    assert_eq!(wrong_method.status, 405);
    // A sibling of a declared path.
    let (dir, _) = shellnums.rsplit_once('/').unwrap();
    let unknown = env.raw("GET", &format!("{dir}/nothing"), None).await;
    assert_eq!(unknown.status, 404);
}

#[tokio::test]
async fn path_parameters_are_percent_decoded_and_undecodable_ones_answered_in_the_envelope() {
    let (env, ent) = with_enterprise("Acme").await;
    // The enterprise's id with every byte percent-encoded names the same enterprise.
    let encoded: String = ent.global_id.bytes().map(|b| format!("%{b:02X}")).collect();
    let ok = env
        .raw("GET", &path("listAssetNums", &[&encoded]), None)
        .await;
    assert_eq!((ok.status, &ok.body["code"]), (200, &json!(0)), "{ok:?}");
    // Not UTF-8 once decoded: a malformed request, answered in the operation's envelope.
    let bad = env.raw("GET", &path("listAssetNums", &["%FF"]), None).await;
    assert_eq!(bad.status, 299, "{bad:?}");
    assert!(
        bad.body["cause"]
            .as_str()
            .is_some_and(|c| c.contains("not valid UTF-8")),
        "{bad:?}"
    );
    // `HEAD` is answered by the router's `GET` route, through the same gate: the
    // status, no body.
    let head = env.raw("HEAD", &path("listAssetNums", &["EG"]), None).await;
    assert_eq!(head.status, 299, "{head:?}");
}

#[tokio::test]
async fn order_service_requires_the_application_token() {
    let shellnums = shellnums();
    let env = start().await;
    let body = Some(json!({ "size": 1 }));
    let missing = env
        .bare("POST", &format!("{shellnums}?g_nonce=a"), &[], body.clone())
        .await;
    assert_eq!((missing.status, missing.code()), (299, "13004".to_string()));
    let wrong = env
        .bare(
            "POST",
            &format!("{shellnums}?g_nonce=b"),
            &[("Authorization", "Bearer nope")],
            body.clone(),
        )
        .await;
    assert_eq!((wrong.status, wrong.code()), (299, "13004".to_string()));
    let not_bearer = env
        .bare(
            "POST",
            &format!("{shellnums}?g_nonce=c"),
            &[("Authorization", "sim-app-token")],
            body.clone(),
        )
        .await;
    assert_eq!(not_bearer.code(), "13004");
    let right = env
        .bare("POST", &format!("{shellnums}?g_nonce=d"), &[APP], body)
        .await;
    assert_eq!((right.status, right.code()), (200, "0".to_string()));

    // Through the SDK the same rejection is a typed error.
    let client = order::Client::builder(&env.url())
        .application_token("nope")
        .build()
        .unwrap();
    let result = client
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
        .await;
    assert_eq!(code_of(result), ErrorCode::ParameterValidationFailed);
}

#[tokio::test]
async fn member_center_checks_all_three_credentials() {
    let asset_nums = asset_nums();
    let env = start().await;
    let cases: [(&[(&str, &str)], &str); 6] = [
        (&[CLIENT_TOKEN, USER_TOKEN], "60000"),
        (&[CLIENT, USER_TOKEN], "60000"),
        (&[CLIENT, ("clientToken", "wrong"), USER_TOKEN], "60000"),
        (
            &[("Authorization", "Bearer other"), CLIENT_TOKEN, USER_TOKEN],
            "70001",
        ),
        (&[CLIENT, CLIENT_TOKEN], "60005"),
        (&[CLIENT, CLIENT_TOKEN, ("userToken", "wrong")], "60005"),
    ];
    for (i, (headers, code)) in cases.into_iter().enumerate() {
        let raw = env
            .bare("GET", &format!("{asset_nums}?g_nonce=n{i}"), headers, None)
            .await;
        assert_eq!(
            (raw.status, raw.code()),
            (299, code.to_string()),
            "case {i}: {raw:?}"
        );
    }
    let ok = env
        .bare(
            "GET",
            &format!("{asset_nums}?g_nonce=ok"),
            &[CLIENT, CLIENT_TOKEN, USER_TOKEN],
            None,
        )
        .await;
    assert_eq!(
        ok.code(),
        "60017",
        "authenticated: the unknown enterprise is the only problem"
    );
}

#[tokio::test]
async fn a_missing_g_nonce_is_a_missing_parameter() {
    let shellnums = shellnums();
    let asset_nums = asset_nums();
    let env = start().await;
    for query in ["", "?g_nonce="] {
        let order = env
            .bare(
                "POST",
                &format!("{shellnums}{query}"),
                &[APP],
                Some(json!({ "size": 1 })),
            )
            .await;
        assert_eq!((order.status, order.code()), (299, "13004".to_string()));
        let member = env
            .bare(
                "GET",
                &format!("{asset_nums}{query}"),
                &[CLIENT, CLIENT_TOKEN, USER_TOKEN],
                None,
            )
            .await;
        // `listAssetNums` does not document `40000`: the service-wide `70001`.
        assert_eq!((member.status, member.code()), (299, "70001".to_string()));
    }
}

#[tokio::test]
async fn a_replayed_g_nonce_is_refused() {
    let shellnums = shellnums();
    let asset_nums = asset_nums();
    let env = start().await;
    let order = || async {
        env.bare(
            "POST",
            &format!("{shellnums}?g_nonce=once"),
            &[APP],
            Some(json!({ "size": 1 })),
        )
        .await
    };
    assert_eq!(order().await.code(), "0");
    let replay = order().await;
    assert_eq!((replay.status, replay.code()), (299, "13004".to_string()));
    assert!(
        replay.body["cause"]
            .as_str()
            .unwrap()
            .contains("already been used")
    );

    let member = || async {
        env.bare(
            "GET",
            &format!("{asset_nums}?g_nonce=twice"),
            &[CLIENT, CLIENT_TOKEN, USER_TOKEN],
            None,
        )
        .await
    };
    assert_eq!(member().await.code(), "60017");
    assert_eq!(member().await.code(), "70001");
}

#[tokio::test]
async fn the_replay_window_is_bounded_in_time_and_count() {
    let shellnums = shellnums();
    let env = start_with(
        Simulator::builder()
            .nonce_window(Duration::from_millis(100))
            .nonce_capacity(2),
    )
    .await;
    let env = &env;
    let shellnums = shellnums.as_str();
    let call = |nonce: &'static str| async move {
        env.bare(
            "POST",
            &format!("{shellnums}?g_nonce={nonce}"),
            &[APP],
            Some(json!({ "size": 1 })),
        )
        .await
    };
    assert_eq!(call("a").await.code(), "0");
    assert_eq!(call("a").await.code(), "13004");
    // Capacity 2: after two newer nonces, "a" is forgotten.
    assert_eq!(call("b").await.code(), "0");
    assert_eq!(call("c").await.code(), "0");
    assert_eq!(call("a").await.code(), "0");
    // After the window, every nonce is forgotten.
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(call("c").await.code(), "0");
}

#[tokio::test]
async fn the_sdk_sends_a_fresh_nonce_on_every_attempt() {
    let env = start().await;
    for _ in 0..20 {
        env.allocate(1).await;
    }
}

#[tokio::test]
async fn faults_are_set_and_cleared_at_runtime() {
    let env = start().await;
    let faults = env.sim.faults();
    assert_eq!(faults.get(), FaultSettings::default());
    faults.set_rate_500(1.0);
    let failed = env
        .member
        .list_asset_nums()
        .enterprise_global_id("EG")
        .await;
    assert_eq!(code_of(failed), ErrorCode::NetworkException);
    faults.clear();
    let after = env
        .member
        .list_asset_nums()
        .enterprise_global_id("EG")
        .await;
    assert_eq!(code_of(after), ErrorCode::NotBoundToLicensingCustomer);

    faults.set_latency(Duration::from_millis(150));
    let started = Instant::now();
    env.allocate(1).await;
    assert!(started.elapsed() >= Duration::from_millis(150));
    faults.clear();
}

#[tokio::test]
async fn dropping_the_simulator_stops_it() {
    let sim = Simulator::start().await.unwrap();
    let addr = sim.addr();
    drop(sim);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());

    let sim = Simulator::start().await.unwrap();
    let addr = sim.addr();
    sim.shutdown().await.unwrap();
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[cfg(unix)]
#[test]
fn the_binary_prints_its_address_reads_the_environment_and_stops_on_ctrl_c() {
    use std::process::{Command, Stdio};

    let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-sim"))
        .args(["--addr", "127.0.0.1:0", "--region", "singapore"])
        .env("LICENSING_SIM_APP_TOKEN", "token-from-env")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("licensing-sim starts");
    let url = licensing_test_support::process::listening_url(&mut child);
    assert!(
        url.starts_with("http://127.0.0.1:") && !url.ends_with(":0"),
        "{url}"
    );

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let numbers = runtime.block_on(async {
        let client = order::Client::builder(&url)
            .application_token("token-from-env")
            .build()
            .unwrap();
        client
            .allocate_shell_nums()
            .body(ot::AllocateShellNumsRequest::builder().size(std::num::NonZeroU32::MIN))
            .await
    });
    assert_eq!(numbers.unwrap()[0].as_str(), "6000000001");

    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "clean exit on Ctrl-C: {status}");
}
