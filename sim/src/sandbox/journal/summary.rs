//! What the journal keeps of a request body too large to keep: the fields that say what
//! the request applied (a batch's `channelOrderId`, its orders' types and asset numbers,
//! the locks or employees named), read in one pass over the body without building it.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::MAX_SUMMARY;

/// The keys a summary keeps. Shared with the coverage report (`coverage/src/doubles.rs`)
/// and documented in `spec/sandbox.yaml` (`JournalEntry.requestBody`): not to be renamed.
const KEPT: [&str; 13] = [
    "channelCode",
    "channelOrderId",
    "orderList",
    "sequence",
    "enterpriseGlobalId",
    "channelCustomerId",
    "customerId",
    "orderType",
    "assets",
    "assetNos",
    "assetNums",
    "userList",
    "userName",
];

/// `body` reduced to the [`KEPT`] keys, as compact JSON: an object keeps only those keys,
/// the value of a kept key is kept whole except that the objects inside it are reduced the
/// same way, and an array keeps every element (each reduced). `None` when the body is not
/// JSON or the summary would exceed [`MAX_SUMMARY`]: the pass stops there, so a body of
/// any size costs at most the bytes read before its summary fills the bound.
pub(super) fn summary(body: &[u8]) -> Option<Box<str>> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    Node { out: &mut out }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    // Written from strings the parser checked, and ASCII punctuation: UTF-8.
    String::from_utf8(out).ok().map(String::into_boxed_str)
}

/// The summary's bound was reached: the pass stops.
#[derive(Debug)]
struct Full;

/// One value, written to `out` reduced.
struct Node<'o> {
    out: &'o mut Vec<u8>,
}

impl Node<'_> {
    fn write<E: de::Error>(&mut self, bytes: &[u8]) -> Result<(), E> {
        if self.out.len() + bytes.len() > MAX_SUMMARY {
            return Err(E::custom(Full));
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// A scalar as JSON. A string is measured first (its escaped form is at least its
    /// length plus the quotes), so a huge one is refused without being copied.
    fn scalar<E: de::Error, T: serde::Serialize + ?Sized>(
        self,
        v: &T,
        len: usize,
    ) -> Result<(), E> {
        if self.out.len() + len > MAX_SUMMARY {
            return Err(E::custom(Full));
        }
        let start = self.out.len();
        serde_json::to_writer(&mut *self.out, v).map_err(E::custom)?;
        if self.out.len() > MAX_SUMMARY {
            self.out.truncate(start);
            return Err(E::custom(Full));
        }
        Ok(())
    }
}

impl fmt::Display for Full {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the summary is larger than {MAX_SUMMARY} bytes")
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.scalar(&v, 1)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(&v, 1)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(&v, 1)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.scalar(&v, 1)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.scalar(v, v.len() + 2)
    }

    fn visit_unit<E: de::Error>(mut self) -> Result<(), E> {
        self.write(b"null")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.write(b"[")?;
        let mut first = true;
        loop {
            if !first {
                // Written before the element is known to exist, taken back after the last.
                self.write(b",")?;
            }
            let element = Node {
                out: &mut *self.out,
            };
            if seq.next_element_seed(element)?.is_none() {
                if !first {
                    self.out.pop();
                }
                break;
            }
            first = false;
        }
        self.write(b"]")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.write(b"{")?;
        let mut first = true;
        while let Some(key) = map.next_key_seed(Key)? {
            let Some(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if !first {
                self.write(b",")?;
            }
            first = false;
            self.write(b"\"")?;
            self.write(key.as_bytes())?;
            self.write(b"\":")?;
            map.next_value_seed(Node {
                out: &mut *self.out,
            })?;
        }
        self.write(b"}")
    }
}

/// A key of an object: which of [`KEPT`] it is, if any (read without being copied).
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<&'static str>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for Key {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(KEPT.iter().copied().find(|k| *k == v))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn summarized(body: &Value) -> Option<Value> {
        let bytes = serde_json::to_vec(body).unwrap();
        summary(&bytes).map(|s| serde_json::from_str(&s).unwrap())
    }

    fn order(i: usize) -> Value {
        json!({
            "sequence": i,
            "customerId": "C100002",
            "crmCustomerId": "CRM-1",
            "customerName": "Customer",
            "channelCustomerId": "CC-Acme",
            "adminEmail": "ada@example.com",
            "passwordMobile": "13800000000",
            "enterpriseGlobalId": "EG-000001",
            "licenseType": "official",
            "orderType": "new_buy",
            "assets": [{
                "assetNos": [format!("{:010}", 1_000_000_000 + i)],
                "products": [{"productUri": "gms-1", "passwords": ["p"], "limitConcurrent": 1}],
                "merchandises": [{"merchandiseId": "M-1", "products": []}]
            }]
        })
    }

    #[test]
    fn a_500_order_batch_keeps_what_it_applied_and_nothing_else() {
        let orders: Vec<Value> = (1..=500).map(order).collect();
        let batch = json!({
            "channelCode": "CH01",
            "channelOrderId": "CO-1",
            "syncMode": "sync",
            "orderList": orders,
        });
        let summary = summarized(&batch).expect("a summary");
        assert_eq!(summary["channelOrderId"], "CO-1");
        assert_eq!(summary["channelCode"], "CH01");
        assert!(summary.get("syncMode").is_none());
        let list = summary["orderList"].as_array().unwrap();
        assert_eq!(list.len(), 500);
        assert_eq!(
            list[499],
            json!({
                "sequence": 500,
                "customerId": "C100002",
                "channelCustomerId": "CC-Acme",
                "enterpriseGlobalId": "EG-000001",
                "orderType": "new_buy",
                "assets": [{"assetNos": ["1000000500"]}]
            })
        );
        let text = summary.to_string();
        for dropped in [
            "products",
            "passwords",
            "merchandises",
            "13800000000",
            "CRM-1",
        ] {
            assert!(!text.contains(dropped), "{dropped} kept");
        }
    }

    #[test]
    fn a_lock_list_and_a_user_list_keep_their_names() {
        let locks = json!({"assetNums": ["8000000001", "8000000002"], "operatorIdentity": "ops@x"});
        assert_eq!(
            summarized(&locks),
            Some(json!({"assetNums": ["8000000001", "8000000002"]}))
        );
        let users = json!({"userList": [
            {"userName": "alice", "password": "Secret-1", "name": "Alice", "departmentId": 10},
            {"userName": "bo\"b\n", "password": "Secret-2"},
            {"name": "no user name"}
        ]});
        let summary = summarized(&users).unwrap();
        assert_eq!(
            summary,
            json!({"userList": [{"userName": "alice"}, {"userName": "bo\"b\n"}, {}]})
        );
        assert!(!summary.to_string().contains("Secret"));
    }

    #[test]
    fn a_body_not_json_has_no_summary() {
        assert_eq!(summary(b"channelOrderId=CO-1&orderList=x"), None);
        assert_eq!(summary(br#"{"channelOrderId":"CO-1""#), None, "cut short");
        assert_eq!(summary(br#"{"channelOrderId":"CO-1"} trailing"#), None);
        assert_eq!(summary(b""), None);
        assert_eq!(
            summary(br#" {"channelOrderId":"CO-1","x":[1,{"y":null}]} "#).as_deref(),
            Some(r#"{"channelOrderId":"CO-1"}"#)
        );
    }

    #[test]
    fn a_summary_too_large_is_none() {
        let orders: Vec<Value> = (1..=5_000).map(order).collect();
        let batch = json!({"channelOrderId": "CO-1", "orderList": orders});
        assert_eq!(summarized(&batch), None);
        // One kept string over the bound, refused before it is copied.
        let long = json!({"channelOrderId": "x".repeat(MAX_SUMMARY)});
        assert_eq!(summarized(&long), None);
        let fits = json!({"channelOrderId": "x".repeat(MAX_SUMMARY - 100)});
        assert_eq!(summarized(&fits), Some(fits));
    }

    /// The journal shows a large request by its size and summary, counts the summary in
    /// its byte bound, and shows a large reply by its size alone.
    #[test]
    fn the_journal_shows_and_counts_the_summary() {
        use crate::protocol::hooks::Exchange;
        use crate::sandbox::journal::{Filter, Journal, MAX_KEPT_BODY};
        use axum::{
            body::Bytes,
            http::{Method, StatusCode},
        };
        let batch = json!({"channelOrderId": "CO-9", "orderList": (1..=500).map(order).collect::<Vec<_>>()});
        let bytes = serde_json::to_vec(&batch).unwrap();
        assert!(bytes.len() > MAX_KEPT_BODY);
        let journal = Journal::new(10, 1 << 30);
        let exchange = |request: Vec<u8>, reply: Vec<u8>| Exchange {
            time: 0,
            operation: "batchOrder",
            method: Method::POST,
            target: "/b".into(),
            request_body: Bytes::from(request),
            reply: Some((StatusCode::OK, Bytes::from(reply))),
            fault: None,
            duration: std::time::Duration::ZERO,
        };
        journal.push(exchange(bytes.clone(), bytes.clone()));
        let mut not_json = bytes.clone();
        not_json[0] = b'<';
        journal.push(exchange(not_json, Vec::new()));
        let page = journal.read(&Filter::default());
        let request = page.entries[0].request_body.as_ref().unwrap();
        assert_eq!(request["omitted"], bytes.len());
        assert_eq!(request["summary"]["channelOrderId"], "CO-9");
        assert_eq!(
            request["summary"]["orderList"].as_array().unwrap().len(),
            500
        );
        let kept = summary(&bytes).unwrap().len();
        assert_eq!(journal.inner().bytes, 2 * "/b".len() + kept);
        assert_eq!(
            page.entries[0].reply_body.as_ref().unwrap(),
            &json!({"omitted": bytes.len()})
        );
        assert_eq!(
            page.entries[1].request_body.as_ref().unwrap(),
            &json!({"omitted": bytes.len()}),
            "not JSON: by its size only"
        );
    }

    #[test]
    fn scalars_and_nesting_are_kept_as_they_were() {
        let body = json!({
            "orderList": [
                {"sequence": -3, "orderType": null, "assets": [], "extra": {"sequence": 1}},
                {"sequence": 1.5, "customerId": true, "assets": [{"assetNos": []}]},
                [{"sequence": 18_446_744_073_709_551_615_u64}],
                "text"
            ],
            "other": {"channelOrderId": "nested under a key not kept"}
        });
        assert_eq!(
            summarized(&body),
            Some(json!({"orderList": [
                {"sequence": -3, "orderType": null, "assets": []},
                {"sequence": 1.5, "customerId": true, "assets": [{"assetNos": []}]},
                [{"sequence": 18_446_744_073_709_551_615_u64}],
                "text"
            ]}))
        );
        assert_eq!(summarized(&json!([])), Some(json!([])));
        assert_eq!(summarized(&json!({})), Some(json!({})));
    }
}
