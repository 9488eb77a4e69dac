//! Replies a test or benchmark serves to the SDK from a raw server.

use serde_json::json;

/// A `listVirtualAssets` success reply: the spec's example asset, its `assetLimits` (a
/// field whose shape the documents do not show) holding `numbers` ones, `1,` each: a body
/// of that many values made without building them as a `serde_json::Value` first.
pub fn assets_with_limits(numbers: usize) -> Vec<u8> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/order.yaml");
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let spec: serde_json::Value =
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut asset = spec["components"]["schemas"]["VirtualAsset"]["example"].clone();
    asset["assetLimits"] = json!("LIMITS");
    let text = json!({"code": 0, "message": "success", "data": [asset]}).to_string();
    let (before, after) = text.split_once("\"LIMITS\"").expect("the placeholder");
    let mut body = Vec::with_capacity(text.len() + 2 * numbers);
    body.extend_from_slice(before.as_bytes());
    body.push(b'[');
    for i in 0..numbers {
        if i > 0 {
            body.push(b',');
        }
        body.push(b'1');
    }
    body.push(b']');
    body.extend_from_slice(after.as_bytes());
    body
}
