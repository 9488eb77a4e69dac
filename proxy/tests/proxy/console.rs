//! The proxy's console: its Conformance page at `/__sandbox/`, fed by what the proxy
//! finds, each deviation with its operation, pointer and exact request and reply
//! (credentials redacted); the simulator's other pages not offered; the admin checks,
//! sessions and anti-forgery rule of the simulator's console.

use std::net::SocketAddr;

use licensing_sim::{DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN};
use licensing_test_support::console::{
    csrf_of, get, not_the_token, send, sign_in, sign_in_with, sign_out,
};
use reqwest::{Method, StatusCode, header};
use serde_json::json;

use super::support;

const TOKEN: &str = "adm-proxy-console-1";

/// The text of a page with its HTML escapes read back.
fn text(html: &str) -> String {
    html.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[tokio::test]
async fn the_conformance_page_shows_each_deviation_with_its_exact_exchange() {
    let env = support::start().await;
    let url = env.proxy.url();
    let page = get(&url, "/__sandbox/", &[]).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.headers[header::LOCATION], "/__sandbox/conformance");
    let empty = get(&url, "/__sandbox/conformance", &[]).await;
    assert_eq!(empty.status, StatusCode::OK);
    assert!(empty.body.contains("0 deviations"), "{}", empty.body);

    env.patch(
        "listMembers",
        json!([{"op": "remove", "path": "/data/list/0/userName"}]),
    )
    .await;
    let eg = env.enterprise.clone();
    let reply = env
        .call(
            "listMembers",
            &[&eg],
            &[("pageNum", "1"), ("pageSize", "10")],
            None,
        )
        .await;
    assert_eq!(reply.deviations, 1, "{reply:?}");
    // A faithful exchange is not kept for the page.
    let faithful = env.call("listAssetNums", &[&eg], &[], None).await;
    assert_eq!(faithful.deviations, 0);
    assert!(
        env.proxy
            .deviations()
            .exchange(&faithful.exchange)
            .is_none()
    );

    let page = get(&url, "/__sandbox/conformance", &[]).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.header(header::CONTENT_SECURITY_POLICY)
            .contains("default-src 'none'")
    );
    let body = text(&page.body);
    assert!(
        body.contains("1 deviations in 1 operations"),
        "the proxy's own finding: {body}"
    );
    assert!(body.contains("Deviations of listMembers"));
    assert!(body.contains("<code>/data/list/0/userName</code>"));
    assert!(body.contains(r#"<span class="rule">required</span>"#));
    assert!(body.contains(&format!("<code>{}</code>", reply.exchange)));
    // The exact request: its method, URL and headers; credentials redacted.
    let port = env.proxy.addr().port();
    assert!(
        body.contains(&format!(
            "GET http://127.0.0.1:{port}/me/api/v1/enterprise/{eg}/members?g_nonce="
        )),
        "{body}"
    );
    assert!(body.contains("pageSize=10"));
    assert!(body.contains("clienttoken: [REDACTED]"), "{body}");
    assert!(body.contains("authorization: [REDACTED]"));
    for secret in [DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN] {
        assert!(!body.contains(secret), "{secret} shown");
    }
    // The exact reply, as the upstream sent it: the first member without its userName.
    assert!(body.contains("HTTP 200"));
    let kept = env.proxy.deviations().exchange(&reply.exchange).unwrap();
    let sent: serde_json::Value = serde_json::from_str(&kept.reply.body).unwrap();
    let first = &sent["data"]["list"][0];
    assert!(
        first.get("userName").is_none() && first["globalId"].is_string(),
        "{sent}"
    );
    let shown = serde_json::to_string_pretty(&sent).unwrap();
    assert!(body.contains(&shown), "the reply on the page: {body}");
    // The page's navigation offers the Conformance page only.
    assert!(!body.contains(r#"href="/__sandbox/state""#));
    assert!(!body.contains(r#"href="/__sandbox/faults""#));
    assert!(body.contains("licensing-proxy"));

    // The same source for a library user: the log the page reads.
    let found = env.proxy.deviations().deviations();
    assert_eq!(found.len(), 1);
    assert_eq!(found, support::read_report(&env.report), "one format");

    // The simulator's other pages are not the proxy's.
    for path in [
        "/__sandbox/state",
        "/__sandbox/faults",
        "/__sandbox/journal/rows",
    ] {
        let answer = get(&url, path, &[]).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
    }
    // Script and style are served from the proxy itself.
    let script = get(&url, "/__sandbox/console.js", &[]).await;
    assert_eq!(script.status, StatusCode::OK);
    // The page's own style sheet, after the console's.
    assert!(body.contains(r#"href="/__sandbox/pages.css""#), "{body}");
    let style = get(&url, "/__sandbox/pages.css", &[]).await;
    assert_eq!(style.status, StatusCode::OK);
    assert!(style.body.contains(".deviations"));
}

/// The pages a proxy serves.
const PAGES: [&str; 2] = ["/__sandbox/", "/__sandbox/conformance"];

#[tokio::test]
async fn the_proxy_s_console_keeps_the_admin_checks_and_sessions() {
    let env = support::start_with(|b| {
        b.addr(SocketAddr::from(([0, 0, 0, 0], 0)))
            .admin_token(TOKEN)
    })
    .await;
    env.patch(
        "listLentLocks",
        json!([{"op": "remove", "path": "/data/0/assetNum"}]),
    )
    .await;
    let base = format!("http://127.0.0.1:{}", env.proxy.addr().port());
    let eg = env.enterprise.clone();
    let r = support::call(&env.http, &base, "listLentLocks", &[&eg], &[], None).await;
    assert_eq!(r.deviations, 1);
    // Without the token (none, a wrong one, a made-up session): a sign-in form, nothing
    // of the findings.
    for credentials in not_the_token() {
        for page in PAGES {
            let answer = get(&base, page, &credentials).await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{page}");
            assert!(answer.body.contains("Sign in"));
            assert!(answer.body.contains("conformance proxy"));
            for data in ["listLentLocks", "assetNum", &eg] {
                assert!(!answer.body.contains(data), "{page} shows {data}");
            }
        }
        let out = send(
            &base,
            Method::POST,
            "/__sandbox/sign-out",
            &credentials,
            None,
        )
        .await;
        assert_eq!(out.status, StatusCode::UNAUTHORIZED);
    }
    // The token as a header opens the page.
    let bearer = format!("Bearer {TOKEN}");
    let page = get(
        &base,
        "/__sandbox/conformance",
        &[("authorization", &bearer)],
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Deviations of listLentLocks"));
    // Signing in: not from a page of another site; a wrong token is refused; the right
    // one opens a session.
    let foreign = sign_in_with(&base, TOKEN, &[("origin", "http://evil.example")]).await;
    assert_eq!(
        foreign.status,
        StatusCode::FORBIDDEN,
        "a page of another site"
    );
    let cookie = sign_in(&base, TOKEN).await;
    let page = get(&base, "/__sandbox/conformance", &[("cookie", &cookie)]).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("/data/0/assetNum"));
    let csrf = csrf_of(&page.body);
    // A change made with the session needs its anti-forgery header.
    let forged = sign_out(&base, &cookie, None).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let out = sign_out(&base, &cookie, Some(&csrf)).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    let after = get(&base, "/__sandbox/conformance", &[("cookie", &cookie)]).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED, "the session ended");
}

#[tokio::test]
async fn on_loopback_the_proxy_s_console_keeps_the_host_rule() {
    let env = support::start().await;
    let port = env.proxy.addr().port();
    let rebound = format!("evil.example:{port}");
    for path in [
        "/__sandbox/",
        "/__sandbox/conformance",
        "/__sandbox/console.js",
    ] {
        let answer = get(&env.proxy.url(), path, &[("host", &rebound)]).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{path}");
    }
}
