//! A run's traffic as HAR 1.2, the shape the conformance proxy records (so that
//! `licensing-proxy coverage` and `licensing-proxy seed from-recording` read it): every
//! entry redacted as the report is, named by its `operationId`.

use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::http::Shown;

/// The HAR document of `exchanges`.
pub fn document(exchanges: &[Shown]) -> Value {
    let entries: Vec<Value> = exchanges.iter().map(entry).collect();
    json!({"log": {
        "version": "1.2",
        "creator": {"name": "licensing probe", "version": env!("CARGO_PKG_VERSION")},
        "entries": entries,
    }})
}

fn pairs(list: &[(String, String)]) -> Vec<Value> {
    list.iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect()
}

fn entry(x: &Shown) -> Value {
    let mut request = json!({
        "method": x.method,
        "url": x.url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": pairs(&x.request_headers),
        "queryString": pairs(&x.query),
        "headersSize": -1,
        "bodySize": x.request_body.as_ref().map_or(0, String::len),
    });
    if let Some(text) = &x.request_body {
        request["postData"] = json!({"mimeType": "application/json", "text": text});
    }
    let mut content = json!({
        "size": x.reply_body.as_ref().map_or(0, String::len),
        "mimeType": "application/json",
    });
    if let Some(text) = &x.reply_body {
        content["text"] = json!(text);
    }
    let ms = x.duration.as_secs_f64() * 1000.0;
    json!({
        "startedDateTime": rfc3339(x.started),
        "time": ms,
        "request": request,
        "response": {
            "status": x.status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": [],
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": ms, "receive": 0},
        "_operationId": x.operation,
        "_note": x.note,
    })
}

/// A time as RFC 3339 in UTC, to the millisecond (a time before 1970 as the epoch, as a
/// recording never holds one; one past chrono's years as the last it can show, where
/// `From<SystemTime>` would panic).
pub fn rfc3339(time: SystemTime) -> String {
    let ms = time
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    i64::try_from(ms)
        .ok()
        .and_then(DateTime::from_timestamp_millis)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_767_225_600_123);
        assert_eq!(rfc3339(t), "2026-01-01T00:00:00.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_825_600);
        assert_eq!(rfc3339(leap), "2000-02-29T12:00:00.000Z");
        // Far past what a clock reads: shown as chrono's last instant, not a panic.
        let far = UNIX_EPOCH + Duration::from_secs(u64::MAX / 2);
        assert!(rfc3339(far).starts_with("+262142-12-31T23:59:59"));
    }
}
