//! The router against the operation table: every method and path the spec declares
//! reaches its handler and answers in the envelope; every other path is a 404 and every
//! other method on a declared path a 405, so the simulator accepts nothing the SDK could
//! not be sent to by the real services.

use std::collections::{BTreeMap, BTreeSet};

use licensing_sdk::operations::{self, Operation, Service};
use serde_json::{Value, json};

use crate::support::{Env, Raw, service_of, start};

/// The methods probed for 405s. `HEAD` is left out: the router answers it wherever `GET`
/// is declared, as HTTP allows.
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/// A segment no template spells, so a path carrying it can only match a parameter.
const UNDECLARED: &str = "sim-undeclared";

/// The operation's path with each parameter filled by a placeholder no template spells.
fn placeholder_path(op: &Operation) -> String {
    let values: Vec<String> = op.path_params().map(|name| format!("sim-{name}")).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    op.path_with(&values)
}

/// Whether a concrete path fits a template, segment by segment, a `{name}` segment
/// taking any non-empty value (as the router matches them).
fn fits(template: &str, path: &str) -> bool {
    let template: Vec<&str> = template.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    template.len() == path.len()
        && template.iter().zip(&path).all(|(t, p)| {
            if t.starts_with('{') && t.ends_with('}') {
                !p.is_empty()
            } else {
                t == p
            }
        })
}

/// The templates a concrete path fits.
fn templates_fitting(path: &str) -> BTreeSet<&'static str> {
    operations::ALL
        .iter()
        .map(|op| op.path)
        .filter(|template| fits(template, path))
        .collect()
}

/// The declared methods of each template (two operations may share one).
fn methods_by_template() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    let mut methods = BTreeMap::<_, BTreeSet<_>>::new();
    for op in operations::ALL {
        methods
            .entry(op.path)
            .or_default()
            .insert(op.method.as_str());
    }
    methods
}

/// A request as [`Env::raw`] sends it (the service's credentials, a fresh `g_nonce`),
/// with an empty JSON object for the methods that carry a body.
async fn send(env: &Env, method: &str, path: &str) -> Raw {
    let body = matches!(method, "POST" | "PUT" | "PATCH").then(|| json!({}));
    env.raw(method, path, body).await
}

#[test]
fn placeholder_paths_fit_only_their_own_template() {
    for op in operations::ALL {
        let path = placeholder_path(op);
        assert!(!path.contains('{'), "{}: {path}", op.id);
        assert_eq!(
            templates_fitting(&path),
            BTreeSet::from([op.path]),
            "{}: {path} must reach {} alone",
            op.id,
            op.path
        );
        // The test requests get the credentials of the operation's own service.
        assert_eq!(service_of(&path), Some(op.service), "{}", op.id);
    }
    assert!(fits("/a/{b}/c", "/a/x/c") && !fits("/a/{b}/c", "/a//c"));
    assert!(!fits("/a/{b}", "/a/x/c") && !fits("/a/b", "/a/c"));
}

#[tokio::test]
async fn every_declared_method_and_path_is_answered_in_the_envelope() {
    let env = start().await;
    for op in operations::ALL {
        let path = placeholder_path(op);
        let method = op.method.as_str();
        let raw = send(&env, method, &path).await;
        let what = format!("{} {method} {path}: {raw:?}", op.id);
        assert!(
            matches!(raw.status, 200 | 299),
            "{what}: not answered by its handler"
        );
        match (raw.status, &raw.body["code"]) {
            (200, code) => assert_eq!(code, &json!(0), "{what}: success is code 0"),
            (_, Value::String(code)) => {
                assert!(!code.is_empty(), "{what}: an empty code");
                assert!(raw.body["message"].is_string(), "{what}: no message");
                if op.service == Service::Member {
                    assert!(
                        !["60000", "60005", "70001"].contains(&code.as_str()),
                        "{what}: the credentials were refused"
                    );
                }
            }
            (_, other) => panic!("{what}: code {other} is not a string"),
        }
    }
}

#[tokio::test]
async fn paths_the_table_does_not_hold_are_404() {
    let env = start().await;
    let mut probes = BTreeSet::from(["/".to_string()]);
    for op in operations::ALL {
        let path = placeholder_path(op);
        probes.insert(format!("{path}/{UNDECLARED}"));
        probes.insert(format!("{path}/"));
        // Every proper prefix: the services' roots and the folders of their operations.
        for (at, _) in path.match_indices('/').skip(1) {
            probes.insert(path[..at].to_string());
        }
    }
    // A probe that fits a template (an extra segment taken as a parameter, a prefix that
    // is itself an operation) is declared, not a 404.
    probes.retain(|path| templates_fitting(path).is_empty());
    assert!(
        probes.len() > operations::ALL.len(),
        "too few undeclared paths left to probe: {probes:?}"
    );
    for path in &probes {
        for method in METHODS {
            let raw = send(&env, method, path).await;
            assert_eq!(raw.status, 404, "{method} {path}: {raw:?}");
        }
    }
}

#[tokio::test]
async fn undeclared_methods_on_declared_paths_are_405() {
    let env = start().await;
    let mut probed = 0;
    for (template, declared) in methods_by_template() {
        let op = operations::ALL
            .iter()
            .find(|op| op.path == template)
            .expect("a template of the table");
        let path = placeholder_path(op);
        for method in METHODS.into_iter().filter(|m| !declared.contains(m)) {
            let raw = send(&env, method, &path).await;
            assert_eq!(
                raw.status, 405,
                "{method} {path} (declared: {declared:?}): {raw:?}"
            );
            probed += 1;
        }
    }
    assert!(probed >= operations::ALL.len(), "probed {probed}");
}
