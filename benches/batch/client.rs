//! The client side: the SDK's own work for one batch, without the network.

use bytes::Bytes;
use licensing_sdk::order::types as o;

/// The SDK's work for one batch call without the network, step by step as the SDK does
/// it: `.body(req)` makes the request the operation's builder; awaiting it prepares the
/// body once per call (the generated `prepare()`: `try_from` the builder, then
/// `__generated::PreparedBody::new`, which checks `Validate`, serializes and drops the
/// request); each attempt's `send()` builds its `reqwest::Request` around those bytes and
/// the client hook adds a fresh `g_nonce`; the reply is decoded by
/// `ResponseValue::from_response` and the envelope (`envelope` in `src/runtime/reply.rs`:
/// the code, then `data`).
pub async fn sdk_client_side(
    http: &reqwest::Client,
    url: &str,
    req: o::BatchOrderRequest,
    reply: &Bytes,
) -> Vec<o::BatchOrderResultItem> {
    use licensing_sdk::runtime::Envelope as _;
    // `.body(req)`
    let builder = o::builder::BatchOrderRequest::from(req);
    // `prepare()`
    let converted = o::BatchOrderRequest::try_from(builder).map_err(|e| e.to_string());
    let prepared = licensing_sdk::__generated::PreparedBody::new(converted).unwrap();
    // `send()` and the client hook
    let mut request = http
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(prepared.body())
        .query(&[("appKey", "bench")])
        .build()
        .unwrap();
    request
        .url_mut()
        .query_pairs_mut()
        .append_pair("g_nonce", &licensing_sdk::runtime::nonce());
    // Sent with its exact length (`Content-Length`), in the chunks it was written to.
    let body = request.body().expect("a body");
    assert_eq!(
        http_body::Body::size_hint(body).exact(),
        Some(prepared.len())
    );
    drop(request); // sent
    // The reply
    let response = http::Response::builder()
        .status(200)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(reply.clone())
        .unwrap();
    let value = progenitor_client::ResponseValue::<o::BatchOrderReply>::from_response::<()>(
        reqwest::Response::from(response),
    )
    .await
    .unwrap();
    let parts = value.into_inner().into_parts();
    assert!(parts.code.is_success(), "{}", parts.message);
    drop(prepared); // the call returns
    parts.data.unwrap()
}
