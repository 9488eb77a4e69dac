//! The admin API against what a web page in a developer's browser can send: simple
//! cross-site requests (no preflight) and requests to a name rebound to 127.0.0.1. Each is
//! refused before it is read, and the state, the fault rules and the journal are as they
//! were; the same calls from a client that sends no `Origin`, from the simulator's own
//! origin, or naming `localhost` work.

use licensing_sim::Simulator;
use licensing_test_support::sim::simulator;
use reqwest::{Client, Method};
use serde_json::{Value, json};

struct Answer {
    status: u16,
    body: Value,
}

/// A request exactly as given, headers included.
/// Adds the rule [`FAULT`] with `headers`.
async fn create_fault(sim: &Simulator, headers: &[(&str, String)]) -> Answer {
    send(
        sim,
        Method::POST,
        "/__sandbox/v1/faults",
        headers,
        Some(FAULT),
    )
    .await
}

async fn send(
    sim: &Simulator,
    method: Method,
    path: &str,
    headers: &[(&str, String)],
    body: Option<&str>,
) -> Answer {
    let mut request = Client::new().request(method, format!("{}{path}", sim.url()));
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    if let Some(body) = body {
        request = request.body(body.to_string());
    }
    let response = request.send().await.expect("the simulator answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    Answer {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
    }
}

/// What a refused request must leave as it was.
async fn observed(sim: &Simulator) -> (Value, Value) {
    let faults = send(sim, Method::GET, "/__sandbox/v1/faults", &[], None).await;
    (sim.export_state(), faults.body)
}

/// What a case is, what it sends (method, path, headers, body) and the status it must get.
type Case = (
    &'static str,
    Method,
    &'static str,
    Vec<(&'static str, String)>,
    Option<&'static str>,
    u16,
);

const FAULT: &str =
    r#"{"operation": "allocateShellNums", "fault": {"kind": "code", "code": "500"}}"#;

async fn seeded() -> Simulator {
    let sim = Simulator::start().await.unwrap();
    let admin = sim.admin();
    licensing_test_support::sim::load_demo(&admin).await;
    sim
}

#[tokio::test]
async fn requests_a_web_page_can_send_are_refused_and_change_nothing() {
    let sim = seeded().await;
    let port = sim.addr().port();
    let before = observed(&sim).await;
    let evil = || ("origin", "http://evil.example".to_string());
    let text = || ("content-type", "text/plain".to_string());
    let cases: Vec<Case> = vec![
        (
            "reset from a cross-site form",
            Method::POST,
            "/__sandbox/v1/reset",
            vec![evil(), text()],
            Some(""),
            403,
        ),
        (
            "a fault rule from a no-cors fetch",
            Method::POST,
            "/__sandbox/v1/faults",
            vec![evil(), text()],
            Some(FAULT),
            403,
        ),
        (
            "the demo seed from a cross-site page",
            Method::POST,
            "/__sandbox/v1/seeds/demo",
            vec![evil()],
            None,
            403,
        ),
        (
            "reset marked cross-site by the browser",
            Method::POST,
            "/__sandbox/v1/reset",
            vec![("sec-fetch-site", "cross-site".into())],
            None,
            403,
        ),
        (
            "the state read through a rebound name",
            Method::GET,
            "/__sandbox/v1/state",
            vec![("host", format!("evil.example:{port}"))],
            None,
            403,
        ),
        (
            "reset through a rebound name, same-origin to the browser",
            Method::POST,
            "/__sandbox/v1/reset",
            vec![
                ("host", format!("evil.example:{port}")),
                ("origin", format!("http://evil.example:{port}")),
            ],
            None,
            403,
        ),
        (
            "localhost on another port",
            Method::GET,
            "/__sandbox/v1/journal",
            vec![("host", format!("localhost:{}", port.wrapping_add(1)))],
            None,
            403,
        ),
        (
            "a fault rule as text/plain without an Origin",
            Method::POST,
            "/__sandbox/v1/faults",
            vec![text()],
            Some(FAULT),
            415,
        ),
    ];
    for (what, method, path, headers, body, status) in cases {
        let answer = send(&sim, method, path, &headers, body).await;
        assert_eq!(answer.status, status, "{what}: {:?}", answer.body);
        let message = answer.body["message"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty() && !message.contains('\n'),
            "{what}: one line: {:?}",
            answer.body
        );
        assert_eq!(observed(&sim).await, before, "{what}: nothing changed");
    }
}

#[tokio::test]
async fn clients_without_origin_the_own_origin_and_localhost_still_work() {
    let sim = seeded().await;
    let port = sim.addr().port();
    let own = sim.url();
    let json = || ("content-type", "application/json".to_string());
    // No Origin (curl, the SDK, the CLI): as before.
    let created = create_fault(&sim, &[json()]).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    // The simulator's own origin, as its own pages send it.
    let created = create_fault(&sim, &[json(), ("origin", own.clone())]).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let same_origin = send(
        &sim,
        Method::DELETE,
        "/__sandbox/v1/faults",
        &[("sec-fetch-site", "same-origin".into()), ("origin", own)],
        None,
    )
    .await;
    assert_eq!(same_origin.status, 204, "{:?}", same_origin.body);
    // Named as localhost, with and without an Origin of that name.
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let state = send(
            &sim,
            Method::GET,
            "/__sandbox/v1/state",
            &[("host", host.clone())],
            None,
        )
        .await;
        assert_eq!(state.status, 200, "{host}: {:?}", state.body);
    }
    let reset = send(
        &sim,
        Method::POST,
        "/__sandbox/v1/reset",
        &[
            ("host", format!("localhost:{port}")),
            ("origin", format!("http://localhost:{port}")),
        ],
        None,
    )
    .await;
    assert_eq!(reset.status, 200, "{:?}", reset.body);
    assert_eq!(sim.export_state()["state"]["enterprises"], json!({}));
    // The services are not the admin API: a page's Origin does not concern them.
    let allocated = send(
        &sim,
        Method::GET,
        "/__sandbox/v1/clock",
        &[("origin", "http://evil.example".into())],
        None,
    )
    .await;
    assert_eq!(
        allocated.status, 200,
        "a read is not refused for its Origin"
    );
}

#[tokio::test]
async fn another_host_name_works_only_when_allowed() {
    let plain = Simulator::start().await.unwrap();
    let named = |sim: &Simulator| vec![("host", format!("licensing-sim:{}", sim.addr().port()))];
    let refused = send(
        &plain,
        Method::GET,
        "/__sandbox/v1/clock",
        &named(&plain),
        None,
    )
    .await;
    assert_eq!(refused.status, 403);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("--allowed-host"),
        "{:?}",
        refused.body
    );
    let allowed = simulator(Simulator::builder().allowed_host("licensing-sim")).await;
    let answer = send(
        &allowed,
        Method::GET,
        "/__sandbox/v1/clock",
        &named(&allowed),
        None,
    )
    .await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    // Still not any name.
    let other = vec![("host", format!("evil.example:{}", allowed.addr().port()))];
    let answer = send(&allowed, Method::GET, "/__sandbox/v1/clock", &other, None).await;
    assert_eq!(answer.status, 403);
}

#[tokio::test]
async fn the_same_rules_hold_with_an_admin_token() {
    let sim = simulator(Simulator::builder().admin_token("adm-1")).await;
    let bearer = || ("authorization", "Bearer adm-1".to_string());
    let port = sim.addr().port();
    let refused = send(
        &sim,
        Method::POST,
        "/__sandbox/v1/reset",
        &[bearer(), ("origin", "http://evil.example".into())],
        None,
    )
    .await;
    assert_eq!(
        refused.status, 403,
        "the token does not make a page's request acceptable"
    );
    let rebound = send(
        &sim,
        Method::GET,
        "/__sandbox/v1/state",
        &[bearer(), ("host", format!("evil.example:{port}"))],
        None,
    )
    .await;
    assert_eq!(rebound.status, 403);
    let ok = send(&sim, Method::POST, "/__sandbox/v1/reset", &[bearer()], None).await;
    assert_eq!(ok.status, 200, "{:?}", ok.body);
    let without = send(&sim, Method::POST, "/__sandbox/v1/reset", &[], None).await;
    assert_eq!(without.status, 401);
}

/// Wrong admin tokens from one address are answered more and more slowly (100 ms, then
/// twice as long each time); a right token clears the count. Only lower bounds are
/// asserted: a busy machine makes every answer later, never earlier.
#[tokio::test]
async fn wrong_admin_tokens_are_answered_more_and_more_slowly() {
    let sim = simulator(Simulator::builder().admin_token("adm-1")).await;
    let with = |token: &str| vec![("authorization", format!("Bearer {token}"))];
    let timed = |token: &'static str| {
        let sim = &sim;
        let headers = with(token);
        async move {
            let started = std::time::Instant::now();
            let answer = send(sim, Method::GET, "/__sandbox/v1/faults", &headers, None).await;
            (answer.status, started.elapsed())
        }
    };
    let ms = std::time::Duration::from_millis;
    let (status, first) = timed("guess-1").await;
    assert_eq!(status, 401);
    assert!(first >= ms(100), "{first:?}");
    let (_, second) = timed("guess-2").await;
    assert!(second >= ms(200), "{second:?}");
    let (_, third) = timed("guess-3").await;
    assert!(third >= ms(400), "{third:?}");
    // Parallel guesses wait their turn: two more at once end at least 800 + 1,600 ms later.
    let started = std::time::Instant::now();
    let (a, b) = tokio::join!(timed("guess-4"), timed("guess-5"));
    assert_eq!((a.0, b.0), (401, 401));
    assert!(started.elapsed() >= ms(2400), "{:?}", started.elapsed());
    // The right token answers at once and clears the count.
    let (status, _) = timed("adm-1").await;
    assert_eq!(status, 200);
    let (status, again) = timed("guess-6").await;
    assert_eq!(status, 401);
    assert!(again >= ms(100), "{again:?}");
    // Uncleared, this sixth guess would wait 3.2 s for its turn.
    assert!(again < ms(3000), "{again:?}");
}
