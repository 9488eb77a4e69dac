//! The simulator under hostile clients: bodies built to be slow to refuse, and calls that
//! make state no load could read back.

#[allow(dead_code)]
#[path = "sim/support.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// A `createEnterprise` body of about 300 KB: 24,000 keys the schema does not know and one
/// field of the wrong type.
fn wide_bad_body() -> Value {
    let mut body = Map::new();
    for i in 0..24_000 {
        body.insert(format!("k{i:05}"), json!(i));
    }
    body.insert("crmCustomerId".into(), json!("CRM-W"));
    body.insert("customerName".into(), json!(12345));
    body.insert("branchName".into(), json!("North"));
    Value::Object(body)
}

/// Refusing a body built to be slow to refuse holds no other request up: the refusal
/// comes in time linear in the body, and a write from another client is answered
/// meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wide_bad_body_holds_no_write_up() {
    let env = support::start().await;
    let body = wide_bad_body();
    let path = support::path("createEnterprise", &[]);
    let started = Instant::now();
    let (bad, write) = tokio::join!(
        async {
            let raw = env.raw("POST", &path, Some(body)).await;
            (raw, started.elapsed())
        },
        async {
            // Sent while the wide body is being read and refused.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let sent = Instant::now();
            env.allocate(1).await;
            sent.elapsed()
        }
    );
    let (raw, bad_took) = bad;
    assert_eq!(raw.status, 299, "{:?}", raw.body);
    assert_eq!(raw.body["code"], "13004");
    let message = raw.body["message"].as_str().unwrap();
    assert!(
        message.contains("customerName"),
        "names the field: {message}"
    );
    eprintln!("the wide body refused in {bad_took:?}; a concurrent write answered in {write:?}");
    assert!(bad_took < Duration::from_secs(1), "refused in {bad_took:?}");
    assert!(
        write < Duration::from_millis(100),
        "a concurrent write waited {write:?}"
    );
}
