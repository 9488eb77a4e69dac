//! The sandbox console's access rules, without a browser: on a non-loopback listener with
//! an admin token, every console page and every action it takes is refused without the
//! token (a sign-in form and nothing of the sandbox); signing in opens a `SameSite=Strict`
//! session whose changes need its anti-forgery header; the pages carry a Content Security
//! Policy. (The pages in a real browser: `cargo xtask console`.)

use std::net::SocketAddr;

use licensing_sim::Simulator;
use licensing_test_support::console::{
    self, csrf_of, get, not_the_token, send, sign_in, sign_in_with, sign_out,
};
use licensing_test_support::sim::simulator;
use reqwest::{Method, StatusCode, header};

const TOKEN: &str = "adm-console-1";

/// A simulator any machine could reach (all interfaces), with an admin token and the demo
/// enterprise; its base URL on loopback.
async fn exposed() -> (Simulator, String) {
    let sim = simulator(
        Simulator::builder()
            .addr(SocketAddr::from(([0, 0, 0, 0], 0)))
            .admin_token(TOKEN),
    )
    .await;
    let base = format!("http://127.0.0.1:{}", sim.addr().port());
    let admin = licensing_sim::admin::client(&base, Some(TOKEN)).unwrap();
    licensing_test_support::sim::load_demo(&admin).await;
    (sim, base)
}

const PAGES: [&str; 6] = [
    "/__sandbox/",
    "/__sandbox/journal/rows?after=0",
    "/__sandbox/coverage",
    "/__sandbox/state",
    "/__sandbox/faults",
    "/__sandbox/conformance",
];

/// Every change the console's pages make, as they make it.
fn actions() -> Vec<(Method, &'static str, Option<&'static str>)> {
    vec![
        (Method::POST, "/__sandbox/v1/reset", Some("{}")),
        (
            Method::POST,
            "/__sandbox/v1/faults",
            Some(r#"{"operation":"allocateShellNums","fault":{"kind":"code","code":"500"}}"#),
        ),
        (Method::DELETE, "/__sandbox/v1/faults", None),
        (Method::DELETE, "/__sandbox/v1/faults/1", None),
        (Method::DELETE, "/__sandbox/v1/journal", None),
        (
            Method::POST,
            "/__sandbox/v1/clock/advance",
            Some(r#"{"ms":1000}"#),
        ),
        (Method::POST, "/__sandbox/v1/seeds/demo", None),
        (Method::PUT, "/__sandbox/v1/state", Some(r#"{"version":1}"#)),
        (Method::GET, "/__sandbox/v1/state", None),
        (Method::POST, "/__sandbox/sign-out", None),
    ]
}

#[tokio::test]
async fn without_the_token_every_page_and_action_is_refused() {
    let (sim, base) = exposed().await;
    let before = sim.export_state();
    let json = ("content-type", "application/json");
    for credentials in not_the_token() {
        // An opened journal entry too.
        for page in PAGES.iter().chain(&["/__sandbox/journal/entry?seq=1"]) {
            let answer = get(&base, page, &credentials).await;
            assert_eq!(
                answer.status,
                StatusCode::UNAUTHORIZED,
                "{page} {credentials:?}"
            );
            assert!(answer.body.contains("Sign in"), "{page}: a sign-in form");
            for data in ["Acme", "alice", "allocateShellNums", "8000000001", "EG-0"] {
                assert!(
                    !answer.body.contains(data),
                    "{page} shows {data}: {}",
                    answer.body
                );
            }
            assert!(
                answer
                    .header(header::CONTENT_SECURITY_POLICY)
                    .contains("default-src 'none'")
            );
        }
        for (method, path, body) in actions() {
            let mut headers = credentials.clone();
            headers.push(json);
            let answer = send(&base, method.clone(), path, &headers, body).await;
            assert_eq!(
                answer.status,
                StatusCode::UNAUTHORIZED,
                "{method} {path} {credentials:?}: {}",
                answer.body
            );
        }
        assert_eq!(sim.export_state(), before, "nothing changed");
    }
    // The script and style hold no data, and are served to the sign-in form.
    let script = get(&base, "/__sandbox/console.js", &[]).await;
    assert_eq!(script.status, StatusCode::OK);
    assert!(
        script
            .header(header::CONTENT_TYPE)
            .starts_with("text/javascript")
    );
}

#[tokio::test]
async fn a_session_opens_the_pages_and_its_changes_need_the_anti_forgery_header() {
    let (sim, base) = exposed().await;
    let cookie = sign_in(&base, TOKEN).await;
    let with = [("cookie", cookie.as_str())];
    for page in PAGES {
        let answer = get(&base, page, &with).await;
        assert_eq!(answer.status, StatusCode::OK, "{page}: {}", answer.body);
    }
    let state = get(&base, "/__sandbox/state", &with).await;
    assert!(state.body.contains("Acme Robotics") && state.body.contains("alice"));
    assert!(
        !state.body.contains("Initial-Pass"),
        "no passwords on the page"
    );
    let csrf = csrf_of(&state.body);
    let before = sim.export_state();
    let json = ("content-type", "application/json");
    let reset = |headers: Vec<(&'static str, String)>| {
        let base = base.clone();
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            send(
                &base,
                Method::POST,
                "/__sandbox/v1/reset",
                &headers,
                Some("{}"),
            )
            .await
        }
    };
    let forged = reset(vec![
        ("cookie", cookie.clone()),
        ("content-type", json.1.into()),
    ])
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    assert!(forged.body.contains("x-sandbox-csrf"));
    let wrong = reset(vec![
        ("cookie", cookie.clone()),
        ("content-type", json.1.into()),
        ("x-sandbox-csrf", "0".repeat(32)),
    ])
    .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    let foreign = reset(vec![
        ("cookie", cookie.clone()),
        ("content-type", json.1.into()),
        ("x-sandbox-csrf", csrf.clone()),
        ("origin", "http://evil.example".into()),
    ])
    .await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN);
    assert_eq!(sim.export_state(), before, "no refused change applied");
    let own = reset(vec![
        ("cookie", cookie.clone()),
        ("content-type", json.1.into()),
        ("x-sandbox-csrf", csrf.clone()),
        ("origin", base.clone()),
    ])
    .await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.body);
    assert_eq!(
        sim.export_state()["state"]["enterprises"],
        serde_json::json!({})
    );
    // Signing out ends the session.
    let out = sign_out(&base, &cookie, Some(&csrf)).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(out.header(header::SET_COOKIE).contains("Max-Age=0"));
    let after = get(&base, "/__sandbox/", &with).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    // The token as a header works for the pages too (a script, a proxy that adds it).
    let bearer = format!("Bearer {TOKEN}");
    let page = get(&base, "/__sandbox/faults", &[("authorization", &bearer)]).await;
    assert_eq!(page.status, StatusCode::OK);
}

#[tokio::test]
async fn on_loopback_the_pages_keep_the_admin_api_host_rule() {
    let sim = Simulator::start().await.unwrap();
    let base = sim.url();
    let port = sim.addr().port();
    let page = get(&base, "/__sandbox/", &[]).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.header(header::CONTENT_SECURITY_POLICY)
            .contains("script-src 'self'")
    );
    // Firefox sends `Origin: null` with a page's own POSTs under `no-referrer`, which the
    // admin checks refuse; `same-origin` keeps the origin for the simulator alone.
    assert_eq!(page.headers[header::REFERRER_POLICY], "same-origin");
    let rebound = format!("evil.example:{port}");
    for path in ["/__sandbox/", "/__sandbox/state", "/__sandbox/console.js"] {
        let answer = get(&base, path, &[("host", &rebound)]).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{path}");
    }
    let signin = sign_in_with(&base, "x", &[("origin", "http://evil.example")]).await;
    assert_eq!(
        signin.status,
        StatusCode::FORBIDDEN,
        "a page of another site cannot sign in"
    );
}

/// Checking traffic against the documents is the conformance proxy's (`licensing-proxy`):
/// the simulator's Conformance page says how to start one in front of it.
#[tokio::test]
async fn the_conformance_page_says_how_to_start_the_proxy() {
    let sim = Simulator::start().await.unwrap();
    let page = get(&sim.url(), "/__sandbox/conformance", &[]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body
            .contains(&format!("licensing-proxy --upstream {}", sim.url())),
        "{}",
        page.body
    );
    assert!(page.body.contains("/__sandbox/"));
}

/// The admin spec (`spec/sandbox.yaml`), as YAML.
fn admin_spec() -> serde_norway::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/spec/sandbox.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn the_admin_spec_documents_the_session_and_its_anti_forgery_403() {
    let spec = admin_spec();
    let schemes = &spec["components"]["securitySchemes"];
    let session = &schemes["adminSession"];
    let forgery = &schemes["sessionAntiForgery"];
    assert_eq!(
        (session["type"].as_str(), session["in"].as_str()),
        (Some("apiKey"), Some("cookie"))
    );
    assert_eq!(
        (forgery["type"].as_str(), forgery["in"].as_str()),
        (Some("apiKey"), Some("header"))
    );
    let requirements: Vec<Vec<&str>> = spec["security"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|r| {
            let mut names: Vec<&str> = r
                .as_mapping()
                .unwrap()
                .keys()
                .map(|k| k.as_str().unwrap())
                .collect();
            names.sort_unstable();
            names
        })
        .collect();
    assert!(requirements.contains(&vec!["adminSession"]), "reads");
    assert!(
        requirements.contains(&vec!["adminSession", "sessionAntiForgery"]),
        "changes"
    );

    // The names are the ones the simulator uses: the cookie signing in sets, and the
    // header its refusal asks for.
    let (sim, base) = exposed().await;
    let cookie = sign_in(&base, TOKEN).await;
    let (name, _) = cookie.split_once('=').unwrap();
    assert_eq!(Some(name), session["name"].as_str(), "the cookie's name");
    let header_name = forgery["name"].as_str().unwrap();

    // Every operation of the spec: with the session alone a read goes through and a
    // change is refused with 403 naming the header, which the operation documents.
    let before = sim.export_state();
    let mut changes = 0;
    for (path, item) in spec["paths"].as_mapping().unwrap() {
        let path = path.as_str().unwrap();
        // Path parameters: any value; the session check comes before the route's own.
        let concrete: String = path
            .split('/')
            .map(|part| if part.starts_with('{') { "1" } else { part })
            .collect::<Vec<_>>()
            .join("/");
        for (method, operation) in item.as_mapping().unwrap() {
            let method = method.as_str().unwrap();
            let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                continue;
            };
            if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method.as_str()) {
                continue;
            }
            let id = operation["operationId"].as_str().unwrap_or(path);
            // The recording routes are the conformance proxy's, not the simulator's.
            if operation["tags"]
                .as_sequence()
                .is_some_and(|tags| tags.iter().any(|t| t.as_str() == Some("recording")))
            {
                continue;
            }
            let with = [
                ("cookie", cookie.as_str()),
                ("content-type", "application/json"),
            ];
            let body = (method != Method::GET).then_some("{}");
            let answer = send(&base, method.clone(), &concrete, &with, body).await;
            if method == Method::GET {
                assert!(
                    ![StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&answer.status),
                    "{id}: a read with the session alone: {} {}",
                    answer.status,
                    answer.body
                );
                continue;
            }
            changes += 1;
            assert_eq!(
                answer.status,
                StatusCode::FORBIDDEN,
                "{id}: a change with the session alone: {}",
                answer.body
            );
            assert!(answer.body.contains(header_name), "{id}: {}", answer.body);
            assert!(
                operation["responses"].get("403").is_some(),
                "{id} does not document its 403"
            );
        }
    }
    assert!(changes >= 9, "{changes} changes in the spec");
    assert_eq!(sim.export_state(), before, "no refused change applied");
    let forbidden = spec["components"]["responses"]["Forbidden"]["description"]
        .as_str()
        .unwrap();
    assert!(forbidden.contains(header_name), "{forbidden}");
}

/// The commands of the journal's "Copy as cURL", as the page shows them (HTML read back),
/// by the entry's `seq`.
fn curl_commands(html: &str) -> Vec<(u64, String)> {
    let mut found = Vec::new();
    for piece in html.split(r#"<pre class="command" id="curl-"#).skip(1) {
        let (seq, rest) = piece.split_once("\">").unwrap();
        let (text, _) = rest.split_once("</pre>").unwrap();
        let text = text
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        found.push((seq.parse().unwrap(), text));
    }
    found
}

/// Every kind of body the journal keeps gives a command that bash runs, making the same
/// call: a JSON object, a JSON string, no body, a body that is not JSON and one too large
/// to keep (the last two read from `body.json`, as the command's note says).
#[tokio::test]
async fn copy_as_curl_runs_in_bash_for_every_body_kind() {
    use licensing_sim::{DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN};

    let sim = Simulator::start().await.unwrap();
    let seeded = licensing_test_support::sim::load_demo(&sim.admin()).await;
    let eg = seeded.enterprises[0].enterprise_global_id.clone();
    let base = sim.url();
    let shellnums = format!("{base}/order/api/order/v1/shellnums");
    let large = format!(r#"{{"size": 1, "pad": "{}"}}"#, "x".repeat(70_000));
    // (what, method, url, body as sent)
    let calls: Vec<(&str, Method, String, Option<String>)> = vec![
        (
            "object",
            Method::POST,
            shellnums.clone(),
            Some(r#"{"size": 2}"#.into()),
        ),
        (
            "string",
            Method::POST,
            shellnums.clone(),
            Some(r#""a JSON string""#.into()),
        ),
        (
            "none",
            Method::GET,
            format!("{base}/me/api/v1/enterprise/{eg}/asset/assetNums"),
            None,
        ),
        (
            "not JSON",
            Method::POST,
            shellnums.clone(),
            Some("size=2".into()),
        ),
        ("too large", Method::POST, shellnums.clone(), Some(large)),
    ];
    let http = console::client();
    for (i, (_, method, url, body)) in calls.iter().enumerate() {
        let mut request = http
            .request(method.clone(), url)
            .query(&[("g_nonce", format!("curl-{i}"))])
            .header("content-type", "application/json");
        request = if url.contains("/me/") {
            request
                .bearer_auth(DEFAULT_CLIENT_TOKEN)
                .header("clientToken", DEFAULT_CLIENT_TOKEN)
                .header("userToken", DEFAULT_USER_TOKEN)
        } else {
            request.bearer_auth(DEFAULT_APP_TOKEN)
        };
        if let Some(body) = body {
            request = request.body(body.clone());
        }
        request.send().await.unwrap();
    }
    let journal = || async {
        let journal = licensing_test_support::sim::journal(&sim.admin()).await;
        journal.entries
    };
    let recorded = journal().await;
    assert_eq!(recorded.len(), calls.len(), "{recorded:?}");
    let page = get(&base, "/__sandbox/journal/rows?after=0", &[]).await;
    assert_eq!(page.status, StatusCode::OK);
    // The rows carry summaries only; each entry's command comes with the entry, opened.
    assert!(curl_commands(&page.body).is_empty(), "{}", page.body);
    let mut opened = String::new();
    for seq in page
        .body
        .split(r#"data-entry="/__sandbox/journal/entry?seq="#)
        .skip(1)
    {
        let seq = &seq[..seq.find('"').unwrap()];
        let entry = get(&base, &format!("/__sandbox/journal/entry?seq={seq}"), &[]).await;
        assert_eq!(entry.status, StatusCode::OK, "{}", entry.body);
        opened.push_str(&entry.body);
    }
    let gone = get(&base, "/__sandbox/journal/entry?seq=999", &[]).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert!(gone.body.contains("no longer kept"), "{}", gone.body);
    let commands = curl_commands(&opened);
    assert_eq!(commands.len(), calls.len(), "{opened}");

    let dir = tempfile::tempdir().unwrap();
    for (what, _, _, body) in &calls {
        // The entries are in the order the calls were made; the page's newest first.
        let at = calls.iter().position(|c| c.0 == *what).unwrap();
        let original = &recorded[at];
        let (_, command) = commands
            .iter()
            .find(|(seq, _)| *seq == original.seq as u64)
            .unwrap_or_else(|| panic!("{what}: no command for entry {}", original.seq));
        std::fs::write(
            dir.path().join("body.json"),
            body.clone().unwrap_or_default(),
        )
        .unwrap();
        // Bounded: a command that waits for ever fails the test instead.
        let mut bash = std::process::Command::new("timeout");
        bash.args(["60", "bash", "-c"])
            .arg(command)
            .current_dir(dir.path())
            .env("LICENSING_APP_TOKEN", DEFAULT_APP_TOKEN)
            .env("LICENSING_CLIENT_TOKEN", DEFAULT_CLIENT_TOKEN)
            .env("LICENSING_USER_TOKEN", DEFAULT_USER_TOKEN);
        // Off the runtime's thread: the simulator answers the command meanwhile.
        let run = tokio::task::spawn_blocking(move || bash.output().unwrap())
            .await
            .unwrap();
        let (out, err) = (
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr),
        );
        assert!(run.status.success(), "{what}: {command}\n{out}\n{err}");
        assert!(!err.contains("not found"), "{what}: {command}\n{err}");
        assert!(
            out.trim_end()
                .ends_with(&format!("HTTP {}", original.status)),
            "{what}: {command}\n{out}"
        );
        // The same call again: operation, body as kept, status.
        let again = journal().await;
        let last = again.last().unwrap();
        assert!(last.seq > original.seq, "{what}: no new call");
        assert_eq!(
            (&last.operation, &last.request_body, last.status, &last.code),
            (
                &original.operation,
                &original.request_body,
                original.status,
                &original.code
            ),
            "{what}: {command}"
        );
    }
}
