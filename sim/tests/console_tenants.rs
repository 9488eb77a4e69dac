//! The tenants in the console, without a browser: the simulator's own admin lists them
//! and opens one's console (a session of that tenant's alone); a tenant's admin token
//! opens that tenant's pages and nothing else — not the list, not another tenant's pages
//! by a changed URL, a session cookie carried elsewhere or a sign-in there. (In a real
//! browser: `cargo xtask console`.)

use std::net::SocketAddr;

use licensing_sim::{Simulator, Tenant, TenantOptions, admin};
use licensing_test_support::{
    console::{csrf_of, get, send, sign_in, sign_in_with},
    partner::allocate_one,
    sim::{load_demo, simulator},
};
use reqwest::{Method, StatusCode, header};

const TOKEN: &str = "adm-console-tenants-1";

/// A simulator any machine could reach, with an admin token and two tenants: `a`, empty
/// but for one call, and `b`, seeded with the demo enterprise; its base URL on loopback.
async fn two_tenants() -> (Simulator, String, Tenant, Tenant) {
    let sim = simulator(
        Simulator::builder()
            .addr(SocketAddr::from(([0, 0, 0, 0], 0)))
            .admin_token(TOKEN),
    )
    .await;
    let base = format!("http://127.0.0.1:{}", sim.addr().port());
    let a = sim
        .tenant_with(TenantOptions::new().name("team <b>A</b>"))
        .unwrap();
    let b = sim
        .tenant_with(TenantOptions::new().name("team B"))
        .unwrap();
    let order = licensing_sdk::order::Client::builder(&url_of(&base, &a))
        .application_token(a.app_token())
        .build()
        .unwrap();
    allocate_one(&order).await.unwrap();
    let b_admin = admin::client(&url_of(&base, &b), Some(b.admin_token())).unwrap();
    load_demo(&b_admin).await;
    (sim, base, a, b)
}

async fn exported(tenant: &Tenant) -> serde_json::Value {
    let state = tenant.admin().export_state().send().await.unwrap();
    serde_json::to_value(state.into_inner()).unwrap()
}

fn url_of(base: &str, tenant: &Tenant) -> String {
    format!("{base}/t/{}", tenant.id())
}

/// Every page of a console, below its root.
const PAGES: [&str; 6] = [
    "",
    "journal/rows?after=0",
    "state",
    "faults",
    "coverage",
    "conformance",
];

/// What only tenant `b`'s pages show (its demo enterprise) and only `a`'s (its call's
/// journal row).
const ONLY_B: &str = "Acme Robotics";
const ONLY_A: &str = r#"data-operation="allocateShellNums""#;

#[tokio::test]
async fn the_simulators_admin_lists_the_tenants_and_opens_one() {
    let (sim, base, a, b) = two_tenants().await;
    let cookie = sign_in(&base, TOKEN).await;
    let with = [("cookie", cookie.as_str())];
    let list = get(&base, "/__sandbox/tenants", &with).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    for tenant in [&a, &b] {
        assert!(list.body.contains(tenant.id()), "{}", list.body);
        assert!(
            list.body
                .contains(&format!("/__sandbox/tenants/{}/open", tenant.id()))
        );
        // Its button's accessible name begins with the words it shows (WCAG 2.5.3), and
        // names the tenant for a screen reader.
        let button = format!(
            r#"<button type="submit">Open console<span class="visually-hidden"> of tenant {}</span></button>"#,
            tenant.id()
        );
        assert!(list.body.contains(&button), "{}", list.body);
        for token in [tenant.admin_token(), tenant.app_token()] {
            assert!(!list.body.contains(token), "no tenant's token on the page");
        }
    }
    assert!(
        list.body.contains("team &lt;b&gt;A&lt;/b&gt;"),
        "names escaped"
    );
    assert!(list.body.contains(">Tenants</a>"), "in the navigation");
    let csrf = csrf_of(&list.body);

    // Opening one: a session of that tenant's, for its prefix alone.
    let open = format!("/__sandbox/tenants/{}/open", a.id());
    let origin = ("origin", base.as_str());
    let forged = send(&base, Method::POST, &open, &[with[0], origin], None).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    let headers = [with[0], ("x-sandbox-csrf", csrf.as_str()), origin];
    let opened = send(&base, Method::POST, &open, &headers, None).await;
    assert_eq!(opened.status, StatusCode::NO_CONTENT, "{}", opened.body);
    let set = opened.header(header::SET_COOKIE).to_string();
    let path = format!("Path=/t/{}/__sandbox;", a.id());
    for attribute in ["HttpOnly", "SameSite=Strict", path.as_str()] {
        assert!(set.contains(attribute), "{set}");
    }
    let a_cookie = set.split(';').next().unwrap().to_string();
    assert_ne!(a_cookie, cookie);
    let at_a = [("cookie", a_cookie.as_str())];
    let a_root = format!("/t/{}/__sandbox/", a.id());
    for page in PAGES {
        let answer = get(&base, &format!("{a_root}{page}"), &at_a).await;
        assert_eq!(answer.status, StatusCode::OK, "{page}: {}", answer.body);
        assert!(!answer.body.contains(ONLY_B), "{page} shows b's state");
    }
    let journal = get(&base, &a_root, &at_a).await;
    assert!(journal.body.contains(ONLY_A), "a's journal shows its call");
    let b_journal = format!("/t/{}/__sandbox/", b.id());
    let bearer_b = format!("Bearer {}", b.admin_token());
    let theirs = get(&base, &b_journal, &[("authorization", &bearer_b)]).await;
    assert_eq!(theirs.status, StatusCode::OK);
    assert!(!theirs.body.contains(ONLY_A), "b's journal does not");
    assert!(journal.body.contains(&format!("{a_root}journal/rows?")));
    assert!(
        !journal.body.contains(">Tenants</a>"),
        "no list in a tenant"
    );
    // The simulator's session is not a tenant's, nor the other way round.
    let b_root = format!("/t/{}/__sandbox/", b.id());
    assert_eq!(
        get(&base, &b_root, &with).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        get(&base, &b_root, &at_a).await.status,
        StatusCode::UNAUTHORIZED
    );
    let home = get(&base, "/__sandbox/tenants", &at_a).await;
    assert_eq!(home.status, StatusCode::UNAUTHORIZED);

    // Neither a tenant's token nor an unknown id opens anything.
    let bearer = format!("Bearer {}", a.admin_token());
    let by_tenant = [("authorization", bearer.as_str()), origin];
    let refused = send(&base, Method::POST, &open, &by_tenant, None).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    let nobody = format!("/__sandbox/tenants/{}/open", "0".repeat(32));
    let missing = send(&base, Method::POST, &nobody, &headers, None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    // Deleted, its console is gone, the session with it.
    assert!(sim.delete_tenant(a.id()).unwrap());
    assert_eq!(
        get(&base, &a_root, &at_a).await.status,
        StatusCode::NOT_FOUND
    );
    let list = get(&base, "/__sandbox/tenants", &with).await;
    assert!(!list.body.contains(a.id()) && list.body.contains(b.id()));
}

#[tokio::test]
async fn a_tenants_admin_token_opens_its_own_pages_and_no_other() {
    let (sim, base, a, b) = two_tenants().await;
    let a_url = url_of(&base, &a);
    let b_root = format!("/t/{}/__sandbox/", b.id());
    let cookie = sign_in(&a_url, a.admin_token()).await;
    let at_a = [("cookie", cookie.as_str())];
    let bearer = format!("Bearer {}", a.admin_token());
    let a_token = [("authorization", bearer.as_str())];
    for credentials in [&at_a, &a_token] {
        let state = get(&a_url, "/__sandbox/state", credentials).await;
        assert_eq!(state.status, StatusCode::OK, "{}", state.body);
        assert!(!state.body.contains(ONLY_B));
        assert!(
            state
                .body
                .contains(&format!("/t/{}/__sandbox/v1/reset", a.id())),
            "its actions go to its own admin API"
        );
        // No list, under its prefix or the simulator's; no other tenant's pages.
        let list = get(&a_url, "/__sandbox/tenants", credentials).await;
        assert_eq!(list.status, StatusCode::NOT_FOUND);
        let api = get(&a_url, "/__sandbox/v1/tenants", credentials).await;
        assert_eq!(api.status, StatusCode::NOT_FOUND);
        for path in ["/__sandbox/", "/__sandbox/tenants", "/__sandbox/state"] {
            let home = get(&base, path, credentials).await;
            assert_eq!(home.status, StatusCode::UNAUTHORIZED, "{path}");
        }
        for page in PAGES {
            let other = get(&base, &format!("{b_root}{page}"), credentials).await;
            assert_eq!(other.status, StatusCode::UNAUTHORIZED, "{page}");
            assert!(other.body.contains("Sign in"), "the sign-in form");
            assert!(!other.body.contains(ONLY_B), "{page}: {}", other.body);
        }
    }
    // Signing in to b with a's token fails as any wrong token does.
    let b_url = url_of(&base, &b);
    let wrong = sign_in_with(&b_url, a.admin_token(), &[]).await;
    assert_eq!(wrong.status, StatusCode::SEE_OTHER);
    assert_eq!(
        wrong.headers[header::LOCATION],
        format!("{b_root}?signin=failed").as_str()
    );
    assert!(!wrong.headers.contains_key(header::SET_COOKIE));

    // Its session changes it alone, with the anti-forgery header as anywhere.
    let page = get(&a_url, "/__sandbox/faults", &at_a).await;
    let csrf = csrf_of(&page.body);
    let b_before = exported(&b).await;
    let rule = r#"{"operation":"allocateShellNums","fault":{"kind":"code","code":"500"}}"#;
    let json = ("content-type", "application/json");
    let origin = ("origin", base.as_str());
    let forged = send(
        &a_url,
        Method::POST,
        "/__sandbox/v1/faults",
        &[at_a[0], json, origin],
        Some(rule),
    )
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    let headers = [at_a[0], ("x-sandbox-csrf", csrf.as_str()), json, origin];
    let added = send(
        &a_url,
        Method::POST,
        "/__sandbox/v1/faults",
        &headers,
        Some(rule),
    )
    .await;
    assert_eq!(added.status, StatusCode::CREATED, "{}", added.body);
    let rules = |t: &Tenant| {
        let admin = t.admin();
        async move { admin.list_faults().send().await.unwrap().into_inner().len() }
    };
    assert_eq!((rules(&a).await, rules(&b).await), (1, 0));
    assert_eq!(exported(&b).await, b_before, "b is untouched");
    // Its session carried to b's console, by a cookie set for b's path, opens nothing.
    let carried = get(&base, &b_root, &at_a).await;
    assert_eq!(carried.status, StatusCode::UNAUTHORIZED);
    drop(sim);
}
