//! A tenant's tokens under other prefixes, deletion, the time to live, `--max-tenants`,
//! and ids no request can make up or lead astray.

use std::{collections::HashSet, time::Duration};

use licensing_sdk::ErrorCode;
use licensing_sim::{Simulator, Tenant, TenantError, TenantOptions, admin};
use licensing_test_support::{partner::allocate_one, sim as support};
use serde_json::{Value, json};

use super::story::Clients;

/// The reply to a request sent as these bytes (no client rewrites its path).
async fn raw(sim: &Simulator, request: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(sim.addr()).await.unwrap();
    let host = sim.addr();
    let head = format!("{request} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    reply
}

/// A tenant's whole state, as its admin API exports it.
async fn exported(tenant: &Tenant) -> Value {
    let state = tenant.admin().export_state().send().await.unwrap();
    serde_json::to_value(state.into_inner()).unwrap()
}

fn status(reply: &str) -> &str {
    reply.split(' ').nth(1).unwrap_or_default()
}

/// An order-service call at `url` with this bearer token: status and body.
async fn allocate_with(url: &str, token: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!(
            "{url}/order/api/order/v1/shellnums?g_nonce={}",
            licensing_sdk::runtime::nonce()
        ))
        .bearer_auth(token)
        .json(&json!({"size": 1}))
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

/// A member-center call at `url` with these client and user tokens: its business code.
async fn list_with(url: &str, client: &str, user: &str) -> Value {
    let c = Clients::with(url, ["-", client, user, "-"]);
    let listed = c
        .member
        .list_members()
        .enterprise_global_id("EG-000001")
        .page_num(1u32)
        .page_size(5u32)
        .await;
    match listed {
        Ok(_) => json!("0"),
        Err(e) => json!(e.code().map(|c| c.as_str().to_string())),
    }
}

/// An admin call at `url` with this token: status and message.
async fn clock_with(url: &str, token: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .get(format!("{url}/__sandbox/v1/clock"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        // A prefix of no tenant is an unknown path: a bare 404.
        response.json::<Value>().await.unwrap_or_default()["message"].clone(),
    )
}

#[tokio::test]
async fn a_tenants_tokens_are_wrong_tokens_anywhere_else() {
    let sim = Simulator::builder()
        .admin_token("root-token")
        .start()
        .await
        .unwrap();
    let (a, b) = (sim.tenant().unwrap(), sim.tenant().unwrap());
    let root = sim.url();
    // The order service: A's token under B's prefix and the default's, as a made-up one.
    let wrong = allocate_with(b.url(), "made-up").await;
    assert_eq!(wrong.1["code"], "13004");
    assert_eq!(allocate_with(b.url(), a.app_token()).await, wrong);
    assert_eq!(allocate_with(&root, a.app_token()).await, wrong);
    assert_eq!(allocate_with(a.url(), a.app_token()).await.1["code"], 0);
    assert_eq!(
        allocate_with(a.url(), licensing_sim::DEFAULT_APP_TOKEN).await,
        wrong
    );
    // The member center.
    let wrong = list_with(b.url(), "made-up", "made-up").await;
    assert_eq!(wrong, "60000");
    assert_eq!(
        list_with(b.url(), a.client_token(), a.user_token()).await,
        wrong
    );
    assert_eq!(
        list_with(&root, a.client_token(), a.user_token()).await,
        wrong
    );
    assert_eq!(
        list_with(b.url(), b.client_token(), a.user_token()).await,
        "60005"
    );
    assert_eq!(
        list_with(a.url(), a.client_token(), a.user_token()).await,
        "0"
    );
    // The admin API: A's admin token administers A only; the simulator's own token
    // administers no tenant's sandbox, and a tenant's token no tenants.
    let wrong = clock_with(b.url(), "made-up").await;
    assert_eq!(wrong.0, 401);
    assert_eq!(clock_with(b.url(), a.admin_token()).await, wrong);
    assert_eq!(clock_with(b.url(), "root-token").await, wrong);
    assert_eq!(clock_with(&root, a.admin_token()).await, wrong);
    assert_eq!(clock_with(a.url(), a.admin_token()).await.0, 200);
    let listing = admin::client(&root, Some(a.admin_token())).unwrap();
    assert_eq!(
        listing
            .list_tenants()
            .send()
            .await
            .unwrap_err()
            .status()
            .map(|s| s.as_u16()),
        Some(401)
    );
    let listing = admin::client(&root, Some("root-token")).unwrap();
    assert_eq!(
        listing
            .list_tenants()
            .send()
            .await
            .unwrap()
            .into_inner()
            .tenants
            .len(),
        2
    );
}

#[tokio::test]
async fn a_deleted_tenant_answers_404_and_the_others_go_on() {
    let sim = Simulator::start().await.unwrap();
    let demo = admin::builtin_seed("demo").unwrap();
    let (gone, kept) = (
        sim.tenant_with(TenantOptions::new().seed(demo.clone()))
            .unwrap(),
        sim.tenant_with(TenantOptions::new().seed(demo)).unwrap(),
    );
    let before = exported(&kept).await;
    let root = sim.admin();
    root.delete_tenant().id(gone.id()).send().await.unwrap();
    let again = root.delete_tenant().id(gone.id()).send().await.unwrap_err();
    assert_eq!(again.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(allocate_with(gone.url(), gone.app_token()).await.0, 404);
    assert_eq!(clock_with(gone.url(), gone.admin_token()).await.0, 404);
    let got = root.get_tenant().id(gone.id()).send().await.unwrap_err();
    assert_eq!(got.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(sim.tenant_ids(), [kept.id()]);
    let after = exported(&kept).await;
    assert_eq!(before, after);
    assert_eq!(
        allocate_with(kept.url(), kept.app_token()).await.1["code"],
        0
    );
}

#[tokio::test(start_paused = true)]
async fn a_tenant_left_idle_past_its_ttl_is_removed() {
    let sim = Simulator::builder()
        .tenant_ttl(Duration::from_secs(60))
        .start()
        .await
        .unwrap();
    let idle = sim.tenant().unwrap();
    let kept = sim
        .tenant_with(TenantOptions::new().ttl(Duration::from_secs(600)))
        .unwrap();
    let c = Clients::of(&idle);
    for _ in 0..3 {
        // Every request starts its idle time again: 150 s in all, never 60 idle.
        tokio::time::advance(Duration::from_secs(50)).await;
        allocate_one(&c.order).await.expect("a used tenant is kept");
    }
    tokio::time::advance(Duration::from_secs(61)).await;
    // No request names it: the simulator's own task removes it.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        sim.tenant_count(),
        1,
        "the idle tenant is gone, its memory with it"
    );
    assert_eq!(allocate_with(idle.url(), idle.app_token()).await.0, 404);
    assert_eq!(
        allocate_with(kept.url(), kept.app_token()).await.1["code"],
        0
    );
    assert_eq!(sim.tenant_ids(), [kept.id()]);
}

#[tokio::test]
async fn creating_past_max_tenants_is_refused() {
    let sim = Simulator::builder().max_tenants(3).start().await.unwrap();
    let made: Vec<Tenant> = (0..3).map(|_| sim.tenant().unwrap()).collect();
    match sim.tenant() {
        Err(TenantError::Full { max: 3 }) => {}
        other => panic!("expected Full, got {other:?}"),
    }
    let refused = reqwest::Client::new()
        .post(format!("{}/__sandbox/v1/tenants", sim.url()))
        .json(&json!({"name": "one too many"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 409);
    let message = refused.json::<Value>().await.unwrap()["message"].clone();
    assert!(
        message.as_str().unwrap().contains("--max-tenants"),
        "{message}"
    );
    assert_eq!(
        sim.tenant_count(),
        3,
        "nothing was held for the refused ones"
    );
    assert!(sim.delete_tenant(made[0].id()).unwrap());
    sim.tenant().expect("room again");
    let none = Simulator::builder().max_tenants(0).start().await.unwrap();
    assert!(matches!(none.tenant(), Err(TenantError::Full { max: 0 })));
}

#[tokio::test]
async fn creation_names_what_is_wrong_and_ids_are_never_taken_from_it() {
    let sim = Simulator::builder().max_tenants(300).start().await.unwrap();
    let create = |body: Value| {
        let url = format!("{}/__sandbox/v1/tenants", sim.url());
        async move {
            let response = reqwest::Client::new()
                .post(url)
                .json(&body)
                .send()
                .await
                .unwrap();
            (
                response.status().as_u16(),
                response.json::<Value>().await.unwrap(),
            )
        }
    };
    for (body, field) in [
        (json!({"id": "00000000000000000000000000000000"}), "id"),
        (json!({"ttl": 0}), "ttl"),
        (json!({"ttl": 2_592_001}), "ttl"),
        (json!({"name": "tab\there"}), "name"),
        (json!({"seed": "nothing"}), "seed"),
        (json!({"region": "mars"}), "region"),
    ] {
        let (status, error) = create(body.clone()).await;
        assert_eq!(status, 400, "{body}: {error}");
        assert!(error.to_string().contains(field), "{body}: {error}");
    }
    assert_eq!(sim.tenant_count(), 0);
    let (status, made) = create(json!({"name": "../../etc", "seed": "demo", "ttl": 30})).await;
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_str().unwrap();
    assert_eq!(made["path"], format!("/t/{id}"));
    assert_eq!(made["url"], format!("{}/t/{id}", sim.url()));
    assert_eq!(
        made["seeded"]["enterprises"][0]["enterpriseGlobalId"],
        "EG-000001"
    );
    // 128 random bits each: two hundred ids, all different, all 32 hex digits.
    let ids: HashSet<String> = (0..200)
        .map(|_| sim.tenant().unwrap().id().to_string())
        .collect();
    assert_eq!(ids.len(), 200);
    assert!(ids.iter().all(|id| {
        id.len() == 32
            && id
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    }));
}

#[tokio::test]
async fn hostile_prefixes_reach_no_tenant() {
    let sim = Simulator::start().await.unwrap();
    let tenant = sim
        .tenant_with(TenantOptions::new().seed(admin::builtin_seed("demo").unwrap()))
        .unwrap();
    let before = exported(&tenant).await;
    let id = tenant.id();
    let upper = id.to_ascii_uppercase();
    let hostile = [
        "GET /t/../__sandbox/v1/tenants".to_string(),
        "GET /t/..%2F__sandbox/v1/tenants".to_string(),
        "GET /t/%2F/__sandbox/v1/state".to_string(),
        "GET /t//__sandbox/v1/state".to_string(),
        "GET /t/".to_string(),
        format!("GET /t/{id}"),
        format!("GET /t/{upper}/__sandbox/v1/state"),
        format!("GET /t/{id}0/__sandbox/v1/state"),
        format!("GET /t/{}/__sandbox/v1/state", &id[1..]),
        format!("GET /t/{id}/../../__sandbox/v1/tenants"),
        format!("GET /t/{id}%2F..%2F..%2F__sandbox/v1/tenants"),
        format!("POST /t/{id}/t/{id}/__sandbox/v1/reset"),
        format!("POST /t/{id}/__sandbox/v1/tenants"),
        format!("DELETE /t/{id}/__sandbox/v1/tenants/{id}"),
    ];
    for request in &hostile {
        let reply = raw(&sim, request).await;
        assert_eq!(status(&reply), "404", "{request}: {reply}");
    }
    let after = exported(&tenant).await;
    assert_eq!(before, after);
    assert_eq!(sim.tenant_ids(), [id]);
    let journal = support::journal(&sim.admin()).await;
    assert!(
        journal.entries.is_empty(),
        "the default tenant saw none of it"
    );
}

#[tokio::test]
async fn the_library_and_the_admin_api_list_the_same_tenants() {
    let sim = Simulator::start().await.unwrap();
    let named = sim
        .tenant_with(
            TenantOptions::new()
                .name("branch feature-x")
                .region(licensing_sim::Region::Singapore),
        )
        .unwrap();
    let c = Clients::of(&named);
    let numbers = allocate_one(&c.order).await.unwrap();
    assert!(numbers[0].starts_with('6'), "{numbers:?}");
    let list = sim
        .admin()
        .list_tenants()
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(list.max, licensing_sim::DEFAULT_MAX_TENANTS as i64);
    let [shown] = &list.tenants[..] else {
        panic!("{list:?}")
    };
    assert_eq!(
        (shown.id.as_str(), shown.name.as_deref()),
        (named.id(), Some("branch feature-x"))
    );
    assert_eq!(shown.region.to_string(), "singapore");
    let got = sim
        .admin()
        .get_tenant()
        .id(named.id())
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.tokens.app, named.app_token());
    assert_eq!(got.url, named.url());
    assert!(
        !format!("{named:?}").contains(named.app_token()),
        "tokens stay out of Debug"
    );
    let code = support::code_of(allocate_one(&Clients::with(named.url(), ["x"; 4]).order).await);
    assert_eq!(code, ErrorCode::from("13004"));
}
