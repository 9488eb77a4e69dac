//! The proxy's own admin routes (`spec/sandbox.yaml`, tag `recording`): start, read and
//! stop the recording. Behind the same checks as the simulator's admin API (`Host`,
//! `Origin`, JSON bodies, the admin token when one is set).

use axum::{
    body::{Body, Bytes},
    http::{Method, Response, StatusCode, request::Parts},
};
use licensing_sandbox_client::types::RecordingSpec;
use serde_json::json;

use super::Shared;

/// Where the recording routes are.
pub(crate) const PREFIX: &str = "/__sandbox/v1/recording";

fn json_reply(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
    let mut response = Response::new(Body::from(
        serde_json::to_vec(value).expect("admin replies serialise"),
    ));
    *response.status_mut() = status;
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// An admin error, as the simulator's admin API answers one: `{"message"}`.
fn admin_error(status: StatusCode, message: &str) -> Response<Body> {
    json_reply(status, &json!({ "message": message }))
}

/// A filter left empty is no filter.
fn some<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

/// Answers a request under [`PREFIX`].
pub(crate) fn handle(shared: &Shared, parts: Parts, body: Result<Bytes, String>) -> Response<Body> {
    if let Some(refused) = shared.admin.refusal(&parts) {
        return refused;
    }
    let recording = &shared.recorder;
    match (parts.method.clone(), parts.uri.path().strip_prefix(PREFIX)) {
        (Method::GET, Some("")) => json_reply(StatusCode::OK, &recording.status()),
        (Method::GET, Some("/har")) => json_reply(StatusCode::OK, &recording.har()),
        (Method::DELETE, Some("")) => json_reply(StatusCode::OK, &recording.stop()),
        (Method::POST, Some("")) => {
            let body = match body {
                Ok(body) => body,
                Err(e) => return admin_error(StatusCode::BAD_REQUEST, &e),
            };
            let spec: RecordingSpec = if body.iter().all(u8::is_ascii_whitespace) {
                RecordingSpec {
                    operations: Vec::new(),
                    outcomes: Vec::new(),
                }
            } else {
                match serde_json::from_slice(&body) {
                    Ok(spec) => spec,
                    Err(e) => {
                        return json_reply(
                            StatusCode::BAD_REQUEST,
                            &json!({"message": format!("the recording's filters: {e}")}),
                        );
                    }
                }
            };
            if let Some(unknown) = spec
                .operations
                .iter()
                .find(|o| licensing_sdk::operations::find(o).is_none())
            {
                return json_reply(
                    StatusCode::BAD_REQUEST,
                    &json!({"field": "operations", "message": format!("unknown operation {unknown:?}")}),
                );
            }
            recording.start(some(spec.operations), some(spec.outcomes));
            json_reply(StatusCode::OK, &recording.status())
        }
        (_, Some("" | "/har")) => admin_error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        _ => admin_error(StatusCode::NOT_FOUND, "no such admin route on the proxy"),
    }
}
