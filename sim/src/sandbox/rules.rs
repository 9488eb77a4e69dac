//! Scripted faults: rules that match an operation (and optionally an enterprise or a body
//! field) and make the next matching calls fail in a chosen way.

use std::sync::{
    Mutex, PoisonError,
    atomic::{AtomicBool, Ordering},
};

use licensing_sdk::operations;
use serde_json::Value;

use super::AdminError;
use super::client::types::{Fault, FaultKind, FaultRule, FaultRuleSpec, PatchOperation};
use crate::protocol::hooks::Rewrite;

/// The rules of a running simulator, tried in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    inner: Mutex<Inner>,
    /// Whether there is any rule: every request asks, and nearly always there is none,
    /// which this answers without the lock.
    any: AtomicBool,
}

#[derive(Debug, Default)]
struct Inner {
    rules: Vec<Rule>,
    next_id: i64,
}

#[derive(Debug)]
struct Rule {
    stored: FaultRule,
    rng: SplitMix64,
}

/// What a request is about, for matching.
pub(crate) struct Subject<'a> {
    pub operation: &'a str,
    pub enterprise: Option<&'a str>,
    pub body: Option<&'a Value>,
}

impl Rules {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks and adds a rule.
    pub fn add(&self, spec: FaultRuleSpec) -> Result<FaultRule, AdminError> {
        check(&spec)?;
        let mut inner = self.inner();
        inner.next_id += 1;
        let stored = FaultRule {
            id: inner.next_id,
            operation: spec.operation,
            enterprise_global_id: spec.enterprise_global_id,
            body_field: spec.body_field,
            times: spec
                .times
                .map(|t| i64::try_from(t.get()).unwrap_or(i64::MAX)),
            probability: spec.probability,
            seed: spec.seed,
            fault: spec.fault,
            hits: 0,
        };
        let rng = SplitMix64(spec.seed.unwrap_or(0) as u64);
        inner.rules.push(Rule {
            stored: stored.clone(),
            rng,
        });
        self.any.store(true, Ordering::Release);
        Ok(stored)
    }

    pub fn list(&self) -> Vec<FaultRule> {
        self.inner()
            .rules
            .iter()
            .map(|r| r.stored.clone())
            .collect()
    }

    pub fn get(&self, id: i64) -> Option<FaultRule> {
        self.inner()
            .rules
            .iter()
            .find(|r| r.stored.id == id)
            .map(|r| r.stored.clone())
    }

    /// Deletes a rule; whether it existed.
    pub fn delete(&self, id: i64) -> bool {
        let mut inner = self.inner();
        let before = inner.rules.len();
        inner.rules.retain(|r| r.stored.id != id);
        self.any.store(!inner.rules.is_empty(), Ordering::Release);
        inner.rules.len() != before
    }

    pub fn clear(&self) {
        let mut inner = self.inner();
        inner.rules.clear();
        self.any.store(false, Ordering::Release);
    }

    /// Whether some rule for this operation looks at the body (which must then be read).
    pub fn wants_body(&self, operation: &str) -> bool {
        if !self.any.load(Ordering::Acquire) {
            return false;
        }
        self.inner().rules.iter().any(|r| {
            r.stored.operation == operation
                && (r.stored.body_field.is_some() || r.stored.enterprise_global_id.is_some())
        })
    }

    /// The first rule that matches and fires: its id and fault (its hit counted).
    pub fn fire(&self, subject: &Subject<'_>) -> Option<(i64, Fault)> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        let mut inner = self.inner();
        for rule in &mut inner.rules {
            let r = &rule.stored;
            if r.operation != subject.operation
                || r.times.is_some_and(|t| r.hits >= t)
                || !r
                    .enterprise_global_id
                    .as_deref()
                    .is_none_or(|e| about_enterprise(subject, e))
                || !r.body_field.as_ref().is_none_or(|m| {
                    subject
                        .body
                        .and_then(|b| b.pointer(&m.pointer))
                        .is_some_and(|v| *v == m.equals)
                })
            {
                continue;
            }
            // Drawn for every match, so a run repeats whatever else the rules did.
            if let Some(p) = r.probability
                && rule.rng.next_f64() >= p
            {
                continue;
            }
            rule.stored.hits += 1;
            return Some((rule.stored.id, rule.stored.fault.clone()));
        }
        None
    }
}

fn about_enterprise(subject: &Subject<'_>, enterprise: &str) -> bool {
    subject.enterprise == Some(enterprise)
        || subject
            .body
            .and_then(|b| b.get("enterpriseGlobalId"))
            .and_then(Value::as_str)
            == Some(enterprise)
}

/// A rule's own consistency: a known operation, a documented code, and exactly the
/// fields its fault kind uses.
fn check(spec: &FaultRuleSpec) -> Result<(), AdminError> {
    let Some(op) = operations::find(&spec.operation) else {
        return Err(AdminError::field(
            "operation",
            format!(
                "unknown operation {:?}; one of: {}",
                spec.operation,
                operations::ALL
                    .iter()
                    .map(|o| o.id)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    if spec.times.is_some_and(|t| i64::try_from(t.get()).is_err()) {
        return Err(AdminError::field(
            "times",
            "must be at most 9223372036854775807",
        ));
    }
    if let Some(p) = spec.probability
        && !(0.0..=1.0).contains(&p)
    {
        return Err(AdminError::field("probability", "must lie between 0 and 1"));
    }
    if let Some(m) = &spec.body_field
        && !(m.pointer.is_empty() || m.pointer.starts_with('/'))
    {
        return Err(AdminError::field(
            "bodyField.pointer",
            "must be a JSON Pointer (empty, or starting with `/`)",
        ));
    }
    let f = &spec.fault;
    let uses = |code: bool, status: bool, ms: bool| -> Result<(), AdminError> {
        for (name, given, used) in [
            ("code", f.code.is_some(), code),
            ("status", f.status.is_some(), status),
            ("ms", f.ms.is_some(), ms),
        ] {
            if given && !used {
                return Err(AdminError::field(
                    format!("fault.{name}"),
                    format!("is not used by a `{}` fault", f.kind),
                ));
            }
            if used && !given {
                return Err(AdminError::field(
                    format!("fault.{name}"),
                    format!("is required by a `{}` fault", f.kind),
                ));
            }
        }
        Ok(())
    };
    match f.kind {
        FaultKind::Code => {
            uses(true, false, false)?;
            let code = f.code.as_deref().unwrap_or_default();
            if !op.documents(code) {
                return Err(AdminError::field(
                    "fault.code",
                    format!(
                        "{code:?} is not a code the documents list for {} (they list {})",
                        op.id,
                        op.error_codes.join(", ")
                    ),
                ));
            }
        }
        FaultKind::Status => {
            uses(false, true, false)?;
            if !f.status.is_some_and(|s| (200..=599).contains(&s)) {
                return Err(AdminError::field(
                    "fault.status",
                    "must be an HTTP status from 200 to 599",
                ));
            }
        }
        FaultKind::Delay | FaultKind::SlowBody => {
            uses(false, false, true)?;
            if !f.ms.is_some_and(|ms| (0..=600_000).contains(&ms)) {
                return Err(AdminError::field(
                    "fault.ms",
                    "must lie between 0 and 600000",
                ));
            }
        }
        FaultKind::DropConnection | FaultKind::TruncatedBody | FaultKind::MalformedBody => {
            uses(false, false, false)?;
        }
        FaultKind::Patch => {
            uses(false, false, false)?;
            if f.patch.is_empty() {
                return Err(AdminError::field(
                    "fault.patch",
                    "is required by a `patch` fault: a non-empty RFC 6902 JSON Patch",
                ));
            }
            patch(&f.patch)?;
        }
    }
    if f.kind != FaultKind::Patch && !f.patch.is_empty() {
        return Err(AdminError::field(
            "fault.patch",
            format!("is not used by a `{}` fault", f.kind),
        ));
    }
    Ok(())
}

/// A rule's patch as RFC 6902 operations; the error names the operation that is not one.
fn patch(operations: &[PatchOperation]) -> Result<json_patch::Patch, AdminError> {
    operations
        .iter()
        .enumerate()
        .map(|(i, op)| {
            serde_json::from_value::<json_patch::PatchOperation>(Value::Object(op.0.clone()))
                .map_err(|e| {
                    AdminError::field(
                        format!("fault.patch[{i}]"),
                        format!("is not an RFC 6902 operation: {e}"),
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(json_patch::Patch)
}

/// What a `patch` rule does to a reply's body: the patched JSON, or the body unchanged
/// (logged) when it is not JSON or the patch does not apply to it.
pub(crate) fn rewrite(rule: i64, operations: &[PatchOperation]) -> Rewrite {
    let patch = patch(operations);
    Rewrite(Box::new(move |body: &[u8]| {
        let patch = patch.ok()?;
        let mut value: Value = match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(_) => {
                tracing::warn!(
                    rule,
                    "patch fault: the reply body is not JSON; left as it was"
                );
                return None;
            }
        };
        if let Err(e) = json_patch::patch(&mut value, &patch) {
            tracing::warn!(rule, error = %e, "patch fault: does not apply to this reply; left as it was");
            return None;
        }
        Some(serde_json::to_vec(&value).expect("a JSON value serialises"))
    }))
}

/// A small, seedable generator: a rule's probability repeats from its seed.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::client::types::BodyFieldMatch;
    use super::*;

    fn spec(operation: &str, kind: FaultKind) -> FaultRuleSpec {
        FaultRuleSpec {
            body_field: None,
            enterprise_global_id: None,
            fault: Fault {
                code: None,
                kind,
                ms: None,
                status: None,
                patch: Vec::new(),
            },
            operation: operation.into(),
            probability: None,
            seed: None,
            times: None,
        }
    }

    #[test]
    fn refuses_unknown_operations_undocumented_codes_and_stray_fields() {
        let rules = Rules::default();
        let e = rules
            .add(spec("nope", FaultKind::DropConnection))
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("operation"));
        let mut code = spec("allocateShellNums", FaultKind::Code);
        code.fault.code = Some("60027".into());
        let e = rules.add(code.clone()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("fault.code"));
        assert!(e.message.contains("13004"), "{}", e.message);
        code.fault.code = Some("500".into());
        code.fault.ms = Some(5);
        assert_eq!(
            rules.add(code).unwrap_err().field.as_deref(),
            Some("fault.ms")
        );
        let e = rules
            .add(spec("allocateShellNums", FaultKind::Delay))
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("fault.ms"));
        assert!(rules.list().is_empty());
    }

    #[test]
    fn times_enterprise_and_body_field() {
        let rules = Rules::default();
        let mut s = spec("batchOrder", FaultKind::DropConnection);
        s.times = std::num::NonZeroU64::new(2);
        s.body_field = Some(BodyFieldMatch {
            pointer: "/channelCode".into(),
            equals: Value::from("CH01"),
        });
        let id = rules.add(s).unwrap().id;
        let body = serde_json::json!({"channelCode": "CH01"});
        let other = serde_json::json!({"channelCode": "CH02"});
        let subject = |body| Subject {
            operation: "batchOrder",
            enterprise: None,
            body: Some(body),
        };
        assert!(rules.fire(&subject(&other)).is_none());
        assert_eq!(rules.fire(&subject(&body)).map(|f| f.0), Some(id));
        assert!(rules.fire(&subject(&body)).is_some());
        assert!(rules.fire(&subject(&body)).is_none(), "fired twice only");
        assert_eq!(rules.get(id).unwrap().hits, 2);
        assert!(rules.delete(id) && !rules.delete(id));
    }

    #[test]
    fn probability_repeats_from_its_seed() {
        let run = || {
            let rules = Rules::default();
            let mut s = spec("listMembers", FaultKind::DropConnection);
            s.probability = Some(0.3);
            s.seed = Some(7);
            rules.add(s).unwrap();
            (0..200)
                .map(|_| {
                    rules
                        .fire(&Subject {
                            operation: "listMembers",
                            enterprise: None,
                            body: None,
                        })
                        .is_some()
                })
                .collect::<Vec<_>>()
        };
        let first = run();
        assert_eq!(first, run());
        let fired = first.iter().filter(|f| **f).count();
        assert!((30..90).contains(&fired), "{fired} of 200 at p = 0.3");
    }

    fn op(value: Value) -> PatchOperation {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn patch_rules_are_checked_and_rewrite_replies() {
        let rules = Rules::default();
        let mut s = spec("listAssetNums", FaultKind::Patch);
        let e = rules.add(s.clone()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("fault.patch"), "{}", e.message);
        s.fault.patch = vec![
            op(serde_json::json!({"op": "remove", "path": "/data"})),
            op(serde_json::json!({"op": "jump", "path": "/x"})),
        ];
        let e = rules.add(s.clone()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("fault.patch[1]"), "{}", e.message);
        s.fault.patch = vec![op(
            serde_json::json!({"op": "replace", "path": "/code", "value": null}),
        )];
        let id = rules.add(s.clone()).unwrap().id;
        let out = (rewrite(id, &s.fault.patch).0)(br#"{"code":0}"#).unwrap();
        assert_eq!(out, br#"{"code":null}"#);
        let missing = [op(serde_json::json!({"op": "remove", "path": "/nope"}))];
        assert!((rewrite(id, &missing).0)(b"{}").is_none(), "left as it was");
        assert!((rewrite(id, &s.fault.patch).0)(b"not json").is_none());
        let mut code = spec("listAssetNums", FaultKind::Code);
        code.fault.code = Some("500".into());
        code.fault.patch = s.fault.patch.clone();
        assert_eq!(
            rules.add(code).unwrap_err().field.as_deref(),
            Some("fault.patch")
        );
    }
}
