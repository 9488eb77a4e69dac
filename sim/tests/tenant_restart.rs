//! The binary with a state file and tenants: every tenant's state comes back exactly after
//! a kill (compared with its export before), with its tokens; a deleted tenant does not;
//! a tenant's damaged log stops the start, and `--recover` starts.

use std::{
    fs,
    path::Path,
    process::{Child, Command, Stdio},
};

use licensing_sim::admin;
use licensing_test_support::{partner::allocate_one, process::listening_url, sim as support};
use serde_json::{Value, json};

const ROOT: &str = "root-token";

/// The binary on a free port with the state file and the simulator's admin token.
fn command(state: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_licensing-sim"));
    command
        .args([
            "--addr",
            "127.0.0.1:0",
            "--admin-token",
            ROOT,
            "--state-file",
        ])
        .arg(state);
    command
}

fn start(state: &Path, more: &[&str]) -> (Child, String) {
    let mut child = command(state)
        .args(more)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = listening_url(&mut child);
    (child, url)
}

/// A tenant as `createTenant` answered it.
async fn create(url: &str, spec: Value) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{url}/__sandbox/v1/tenants"))
        .bearer_auth(ROOT)
        .json(&spec)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
    response.json().await.unwrap()
}

fn token<'t>(tenant: &'t Value, kind: &str) -> &'t str {
    tenant["tokens"][kind].as_str().unwrap()
}

fn admin_of(url: &str, tenant: &Value) -> admin::Client {
    admin::client(
        &format!("{url}{}", tenant["path"].as_str().unwrap()),
        Some(token(tenant, "admin")),
    )
    .unwrap()
}

async fn export(client: &admin::Client) -> Value {
    serde_json::to_value(client.export_state().send().await.unwrap().into_inner()).unwrap()
}

/// Some work in a tenant: numbers allocated, its clock moved.
async fn work(url: &str, tenant: &Value, n: usize) {
    let base = format!("{url}{}", tenant["path"].as_str().unwrap());
    let order = licensing_sdk::order::Client::builder(&base)
        .application_token(token(tenant, "app"))
        .build()
        .unwrap();
    for _ in 0..n {
        allocate_one(&order).await.unwrap();
    }
    let setting = admin::types::ClockSetting::builder()
        .now(1_800_000_000_000 + n as i64)
        .frozen(Some(true));
    admin_of(url, tenant)
        .set_clock()
        .body(setting)
        .send()
        .await
        .unwrap();
}

fn kill(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn every_tenant_comes_back_after_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let (child, url) = start(&state, &[]);
    let seeded = create(&url, json!({"seed": "demo", "name": "seeded"})).await;
    let singapore = create(&url, json!({"region": "singapore", "ttl": 900})).await;
    let deleted = create(&url, json!({})).await;
    work(&url, &seeded, 3).await;
    work(&url, &singapore, 2).await;
    support::load_demo(&admin_of(&url, &singapore)).await;
    let root = admin::client(&url, Some(ROOT)).unwrap();
    support::load_demo(&root).await;
    root.delete_tenant()
        .id(deleted["id"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    let before = [
        export(&admin_of(&url, &seeded)).await,
        export(&admin_of(&url, &singapore)).await,
        export(&root).await,
    ];
    assert_ne!(before[0], before[1]);
    kill(child);

    let (child, url) = start(&state, &[]);
    let root = admin::client(&url, Some(ROOT)).unwrap();
    let listed = root.list_tenants().send().await.unwrap().into_inner();
    let shown = |id: &Value| {
        let id = id.as_str().unwrap();
        listed.tenants.iter().find(|t| t.id == id).cloned()
    };
    assert_eq!(listed.tenants.len(), 2, "{listed:?}");
    assert_eq!(
        shown(&seeded["id"]).unwrap().name.as_deref(),
        Some("seeded")
    );
    assert_eq!(shown(&singapore["id"]).unwrap().ttl, 900);
    assert!(shown(&deleted["id"]).is_none());
    let after = [
        export(&admin_of(&url, &seeded)).await,
        export(&admin_of(&url, &singapore)).await,
        export(&root).await,
    ];
    assert_eq!(before, after, "every tenant's state, exactly");
    // The same tokens, and changes go on from where they were.
    work(&url, &singapore, 1).await;
    let deleted_dir = state
        .with_extension("json.tenants")
        .join(deleted["id"].as_str().unwrap());
    assert!(!deleted_dir.exists(), "a deleted tenant's files are gone");
    kill(child);

    // A damaged log of one tenant stops the start, naming it; --recover starts.
    let log = state
        .with_extension("json.tenants")
        .join(seeded["id"].as_str().unwrap())
        .join("state.json.log");
    let mut bytes = fs::read(&log).unwrap();
    let garbage = vec![0x42; 64];
    bytes.splice(20..20, garbage);
    fs::write(&log, &bytes).unwrap();
    let output = command(&state).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(seeded["id"].as_str().unwrap()) && stderr.contains("--recover"),
        "{stderr}"
    );
    let (child, url) = start(&state, &["--recover"]);
    let root = admin::client(&url, Some(ROOT)).unwrap();
    assert_eq!(
        root.list_tenants()
            .send()
            .await
            .unwrap()
            .into_inner()
            .tenants
            .len(),
        2
    );
    kill(child);
}
