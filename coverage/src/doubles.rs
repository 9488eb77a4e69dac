//! Suspected double submissions: requests whose effect the services apply again when they
//! are sent again, found applied twice in a recording. The documents are silent on
//! duplicates (the simulator accepts the same `new_buy` under the same `channelOrderId`),
//! so these are suspicions for a person to look at, each naming both exchanges:
//!
//! - `batchOrder`: the same `channelOrderId` applied twice in one scope; or the same asset
//!   number in an order of the same type (`new_buy`, `delete_asset`, `delete_product`) of
//!   two batches that are not already a double by their `channelOrderId`;
//! - `disableLocks` / `enableLocks`: a lock disabled (or enabled) again with no call of
//!   the other in between;
//! - `addMembers`: the same `userName` added again to the same enterprise with no
//!   `deleteMember` of that enterprise in between (a deletion names the employee by its
//!   id, which the request does not carry, so any deletion clears the suspicion).
//!
//! The scope of a `channelOrderId`: the documents call it the channel's own order number
//! and give it once per batch, beside the batch's `channelCode`, while each order of the
//! batch names its enterprise (`enterpriseGlobalId`). So two batches are a double by their
//! `channelOrderId` when they have the same `channelCode` (or both none) and the same
//! `channelOrderId`, and their orders' enterprises overlap (a batch whose orders name no
//! enterprise overlaps any): the same order number used by one channel for two different
//! enterprises is two orders, not one applied twice.
//!
//! Applied means answered code `0`, or the operation's partial-success code. The check
//! reads the request body, or, when the recorder kept only a large body's size, the
//! summary it kept instead (`{"omitted": N, "summary": {…}}`, the body reduced to the
//! keys read here). An applied write it cannot read (no body, no summary, a batch without
//! `channelOrderId`) is never compared by an empty key: it is counted, per operation, as
//! not checked, and the report says how many. Each recording or journal is one
//! deployment's history: merged, their doubles are found within each (the same asset
//! number allocated by two simulators is no double).
//!
//! What the check remembers grows with the distinct keys it meets (`channelOrderId`s,
//! asset numbers, locks, employees), never with the exchanges: at most
//! [`MAX_REMEMBERED_KEYS`] of them a recording (about 100 bytes each), a write that needs
//! one more counted as not checked; and it lists at most [`MAX_LISTED`] doubles, counting
//! the rest.

use std::{
    collections::{BTreeMap, BTreeSet},
    rc::Rc,
};

use serde::Serialize;

use crate::{
    Exchange, Operation,
    record::Body,
    walk::{Container, Scalar, Sink, Walk},
};

/// The most suspected double submissions a report lists; the others are counted
/// ([`Report::doubles_not_listed`](crate::Report::doubles_not_listed)).
pub const MAX_LISTED: usize = 1000;

/// The most keys (a batch's `channelOrderId`, an asset number, a lock, an employee) the
/// check remembers of one recording.
pub const MAX_REMEMBERED_KEYS: usize = 1_000_000;

/// The tagged list the batch check reads the order type from (`orderList[new_buy]`).
pub(crate) const ORDER_TAG: (&str, &str) = ("orderList[]", "orderType");

/// Two exchanges that applied the same thing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Double {
    /// The operation of the second exchange.
    pub operation: String,
    /// What was applied twice: `channelOrderId CO-1`, `new_buy of asset 8000000001`,
    /// `disable of lock 8000000001`, `member alice in EG-1`.
    pub what: String,
    /// The exchanges, by source, first the earlier one.
    pub first: String,
    pub second: String,
}

/// A batch's scope: its `channelCode` (if any) and its `channelOrderId`.
type OrderKey = (Option<Box<str>>, Box<str>);

/// A batch applied under a `channelOrderId`.
struct Batch {
    enterprises: BTreeSet<Box<str>>,
    source: Rc<str>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Disable,
    Enable,
}

/// The doubles of a history, exchange by exchange.
pub(crate) struct Finder {
    /// The recording being read; its keys are forgotten when the next begins.
    recording: Option<String>,
    orders: BTreeMap<OrderKey, Vec<Batch>>,
    /// (order type, asset number) → the batch that applied it.
    assets: BTreeMap<(Box<str>, Box<str>), Rc<str>>,
    /// Lock → its last applied change, and where.
    locks: BTreeMap<Box<str>, (Change, Rc<str>)>,
    /// (enterprise, userName) → where it was added.
    members: BTreeMap<(Box<str>, Box<str>), Rc<str>>,
    remembered: usize,
    /// The most keys remembered ([`MAX_REMEMBERED_KEYS`]).
    max_keys: usize,
    /// A key was not remembered for want of room while reading the current exchange.
    full: bool,
    pub(crate) found: Vec<Double>,
    pub(crate) not_listed: usize,
    pub(crate) unchecked: BTreeMap<String, usize>,
}

impl Default for Finder {
    fn default() -> Self {
        Finder {
            recording: None,
            orders: BTreeMap::new(),
            assets: BTreeMap::new(),
            locks: BTreeMap::new(),
            members: BTreeMap::new(),
            remembered: 0,
            max_keys: MAX_REMEMBERED_KEYS,
            full: false,
            found: Vec::new(),
            not_listed: 0,
            unchecked: BTreeMap::new(),
        }
    }
}

/// The recording an exchange came from: its source up to the `#`.
fn recording(x: &Exchange) -> &str {
    x.source
        .rsplit_once('#')
        .map_or(x.source.as_str(), |(file, _)| file)
}

/// The path parameter after `segment` (`/enterprise/{id}/…`).
fn after<'p>(path: &'p str, segment: &str) -> Option<&'p str> {
    let mut parts = path.split('/');
    parts.find(|p| *p == segment)?;
    parts.next()
}

/// The order type of `orderList[TYPE]` followed by `rest`.
fn order_field<'p>(path: &'p str, rest: &str) -> Option<&'p str> {
    path.strip_prefix("orderList[")?.strip_suffix(rest)
}

/// Whether the check reads `op`'s requests.
pub(crate) fn checks(op: &str) -> bool {
    matches!(
        op,
        "batchOrder" | "disableLocks" | "enableLocks" | "addMembers" | "deleteMember"
    )
}

impl Finder {
    /// Reads `x`, an exchange of `op` (`applied` when the service applied it), whose body
    /// (or summary) is `walk`.
    pub(crate) fn add(&mut self, op: &Operation, applied: bool, x: &Exchange, walk: Option<&Walk>) {
        let name = recording(x);
        if self.recording.as_deref() != Some(name) {
            *self = Finder {
                recording: Some(name.to_string()),
                found: std::mem::take(&mut self.found),
                not_listed: self.not_listed,
                unchecked: std::mem::take(&mut self.unchecked),
                max_keys: self.max_keys,
                ..Finder::default()
            };
        }
        if !applied || !checks(&op.id) {
            return;
        }
        let source: Rc<str> = x.source.as_str().into();
        self.full = false;
        let read = match (op.id.as_str(), walk) {
            ("deleteMember", _) => {
                let enterprise = after(&x.path, "enterprise").unwrap_or_default();
                let before = self.members.len();
                self.members.retain(|(e, _), _| &**e != enterprise);
                self.remembered -= before - self.members.len();
                true
            }
            (_, None) => false,
            ("batchOrder", Some(walk)) => self.batch(op, &source, walk),
            ("addMembers", Some(walk)) => {
                let enterprise = after(&x.path, "enterprise").unwrap_or_default();
                walk.fields(&mut Members {
                    finder: self,
                    op,
                    source: &source,
                    enterprise,
                });
                true
            }
            (_, Some(walk)) => {
                let change = if op.id == "disableLocks" {
                    Change::Disable
                } else {
                    Change::Enable
                };
                walk.fields(&mut Locks {
                    finder: self,
                    op,
                    source: &source,
                    change,
                });
                true
            }
        };
        if !read || self.full {
            *self.unchecked.entry(op.id.clone()).or_insert(0) += 1;
        }
    }

    /// Room for one more key.
    fn room(&mut self) -> bool {
        if self.remembered < self.max_keys {
            self.remembered += 1;
            true
        } else {
            self.full = true;
            false
        }
    }

    fn double(&mut self, op: &Operation, what: String, first: &str, second: &str) {
        if self.found.len() < MAX_LISTED {
            self.found.push(Double {
                operation: op.id.clone(),
                what,
                first: first.to_string(),
                second: second.to_string(),
            });
        } else {
            self.not_listed += 1;
        }
    }

    /// A batch: by its `channelOrderId` in its scope, then (when that is no double) by
    /// its assets. False when it has no `channelOrderId` to compare.
    fn batch(&mut self, op: &Operation, source: &Rc<str>, walk: &Walk) -> bool {
        let mut scope = Scope::default();
        walk.fields(&mut scope);
        let Some(id) = scope.id.filter(|id| !id.is_empty()) else {
            walk.fields(&mut Assets {
                finder: self,
                op,
                source,
            });
            return false;
        };
        let key = (scope.code.map(Into::into), id.into_boxed_str());
        let batch = Batch {
            enterprises: scope.enterprises,
            source: source.clone(),
        };
        let overlapping = |b: &Batch| {
            b.enterprises.is_empty()
                || batch.enterprises.is_empty()
                || !b.enterprises.is_disjoint(&batch.enterprises)
        };
        match self.orders.get_mut(&key) {
            Some(list) => match list.iter().rposition(overlapping) {
                Some(at) => {
                    // Replaced: a third sending pairs with the second.
                    let first = std::mem::replace(&mut list[at], batch).source;
                    self.double(op, format!("channelOrderId {}", key.1), &first, source);
                    return true;
                }
                None => {
                    if self.remembered < self.max_keys {
                        self.remembered += 1;
                        list.push(batch);
                    } else {
                        self.full = true;
                    }
                }
            },
            None => {
                if self.room() {
                    self.orders.insert(key, vec![batch]);
                }
            }
        }
        walk.fields(&mut Assets {
            finder: self,
            op,
            source,
        });
        true
    }
}

/// What scopes a batch: its `channelCode`, `channelOrderId` and its orders' enterprises.
#[derive(Default)]
struct Scope {
    code: Option<String>,
    id: Option<String>,
    enterprises: BTreeSet<Box<str>>,
}

impl Sink for Scope {
    fn container(&mut self, _: &str, _: Container) {}
    fn scalar(&mut self, path: &str, value: Scalar<'_>) {
        let Some(text) = value.as_str() else {
            return;
        };
        match path {
            "channelCode" => self.code = Some(text.to_string()),
            "channelOrderId" => self.id = Some(text.to_string()),
            _ if order_field(path, "].enterpriseGlobalId").is_some() => {
                self.enterprises.insert(text.into());
            }
            _ => {}
        }
    }
}

struct Assets<'a> {
    finder: &'a mut Finder,
    op: &'a Operation,
    source: &'a Rc<str>,
}

impl Sink for Assets<'_> {
    fn container(&mut self, _: &str, _: Container) {}
    fn scalar(&mut self, path: &str, value: Scalar<'_>) {
        let (Some(kind), Some(number)) =
            (order_field(path, "].assets[].assetNos[]"), value.as_str())
        else {
            return;
        };
        let key: (Box<str>, Box<str>) = (kind.into(), number.into());
        match self.finder.assets.get(&key) {
            Some(first) if first != self.source => {
                let first = first.clone();
                let what = format!("{kind} of asset {number}");
                self.finder.double(self.op, what, &first, self.source);
            }
            Some(_) => {}
            None => {
                if self.finder.room() {
                    self.finder.assets.insert(key, self.source.clone());
                }
            }
        }
    }
}

struct Locks<'a> {
    finder: &'a mut Finder,
    op: &'a Operation,
    source: &'a Rc<str>,
    change: Change,
}

impl Sink for Locks<'_> {
    fn container(&mut self, _: &str, _: Container) {}
    fn scalar(&mut self, path: &str, value: Scalar<'_>) {
        let (true, Some(lock)) = (path == "assetNums[]", value.as_str()) else {
            return;
        };
        let now = (self.change, self.source.clone());
        let last = match self.finder.locks.get_mut(lock) {
            Some(last) => Some(std::mem::replace(last, now)),
            None => {
                if self.finder.room() {
                    self.finder.locks.insert(lock.into(), now);
                }
                None
            }
        };
        if let Some((change, first)) = last
            && change == self.change
        {
            let what = match change {
                Change::Disable => format!("disable of lock {lock}"),
                Change::Enable => format!("enable of lock {lock}"),
            };
            self.finder.double(self.op, what, &first, self.source);
        }
    }
}

struct Members<'a> {
    finder: &'a mut Finder,
    op: &'a Operation,
    source: &'a Rc<str>,
    enterprise: &'a str,
}

impl Sink for Members<'_> {
    fn container(&mut self, _: &str, _: Container) {}
    fn scalar(&mut self, path: &str, value: Scalar<'_>) {
        let (true, Some(name)) = (path == "userList[].userName", value.as_str()) else {
            return;
        };
        let key: (Box<str>, Box<str>) = (self.enterprise.into(), name.into());
        let first = match self.finder.members.get_mut(&key) {
            Some(first) => Some(std::mem::replace(first, self.source.clone())),
            None => {
                if self.finder.room() {
                    self.finder.members.insert(key, self.source.clone());
                }
                None
            }
        };
        if let Some(first) = first {
            let what = format!("member {name} in {}", self.enterprise);
            self.finder.double(self.op, what, &first, self.source);
        }
    }
}

/// What the check reads of a body: the body, or the summary kept of a large one.
pub(crate) fn readable(body: &Body) -> Option<&str> {
    match body {
        Body::Json(text) => Some(text),
        Body::Omitted {
            summary: Some(summary),
            ..
        } => Some(summary),
        _ => None,
    }
}

/// Every suspected double submission of `exchanges` (at most [`MAX_LISTED`]), in the
/// order the second happened, found within each recording.
pub fn find(catalogue: &crate::Catalogue, exchanges: &[Exchange]) -> Vec<Double> {
    crate::Report::new(catalogue, exchanges).suspected_double_submissions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Catalogue, walk::Tags};

    #[test]
    fn a_write_that_needs_a_key_past_the_bound_is_counted_as_not_checked() {
        let catalogue = Catalogue::documents().unwrap();
        let op = catalogue
            .operations
            .iter()
            .find(|o| o.id == "disableLocks")
            .unwrap();
        let mut finder = Finder {
            max_keys: 2,
            ..Finder::default()
        };
        let tags = Tags::new();
        let disable = |seq: u32, locks: &str| Exchange {
            source: format!("j#seq {seq}"),
            operation: Some("disableLocks".into()),
            method: "POST".into(),
            path: String::new(),
            query: Vec::new(),
            request: Body::Json(format!("{{\"assetNums\": [{locks}]}}").into()),
            status: 200,
            code: Some("0".into()),
        };
        for (seq, locks) in [(1, "\"L1\", \"L2\""), (2, "\"L3\""), (3, "\"L1\"")] {
            let x = disable(seq, locks);
            let text = crate::doubles::readable(&x.request).unwrap();
            let walk = Walk::new(text, &tags).unwrap();
            finder.add(op, true, &x, Some(&walk));
        }
        // L3 found no room: its write is not checked; L1, remembered, is still compared.
        assert_eq!(finder.unchecked.get("disableLocks"), Some(&1));
        let what: Vec<&str> = finder.found.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(what, ["disable of lock L1"]);
        assert_eq!(finder.remembered, 2);
        // The next recording starts with room again.
        let mut other = disable(1, "\"L3\"");
        other.source = "k#seq 1".into();
        let walk = Walk::new("{\"assetNums\": [\"L3\"]}", &tags).unwrap();
        finder.add(op, true, &other, Some(&walk));
        assert_eq!(finder.unchecked.get("disableLocks"), Some(&1));
    }
}
