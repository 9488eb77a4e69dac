//! Suspected double submissions: requests whose effect the services apply again when they
//! are sent again, found applied twice in a recording. The documents are silent on
//! duplicates (the simulator accepts the same `new_buy` under the same `channelOrderId`),
//! so these are suspicions for a person to look at, each naming both exchanges:
//!
//! - `batchOrder`: the same `channelOrderId` applied twice; or the same asset number in an
//!   order of the same type (`new_buy`, `delete_asset`, `delete_product`) of two batches
//!   with different `channelOrderId`s;
//! - `disableLocks` / `enableLocks`: a lock disabled (or enabled) again with no call of
//!   the other in between;
//! - `addMembers`: the same `userName` added again to the same enterprise with no
//!   `deleteMember` of that enterprise in between (a deletion names the employee by its
//!   id, which the request does not carry, so any deletion clears the suspicion).
//!
//! Applied means answered code `0`, or the operation's partial-success code. Each recording
//! or journal is one deployment's history: merged, their doubles are found within each
//! (the same asset number allocated by two simulators is no double).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::{Catalogue, Exchange};

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

fn applied(catalogue: &Catalogue, x: &Exchange, id: &str) -> bool {
    let partial = catalogue
        .operations
        .iter()
        .find(|o| o.id == id)
        .and_then(|o| o.partial_code.as_deref());
    x.status != 0
        && x.code
            .as_deref()
            .is_some_and(|c| c == "0" || Some(c) == partial)
}

fn strings(value: Option<&Value>) -> impl Iterator<Item = &str> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The path parameter after `segment` (`/enterprise/{id}/…`).
fn after<'p>(path: &'p str, segment: &str) -> Option<&'p str> {
    let mut parts = path.split('/');
    parts.find(|p| *p == segment)?;
    parts.next()
}

/// The recording an exchange came from: its source up to the `#`.
fn recording(x: &Exchange) -> &str {
    x.source
        .rsplit_once('#')
        .map_or(x.source.as_str(), |(file, _)| file)
}

/// Every suspected double submission of `exchanges`, in the order the second happened,
/// found within each recording.
pub fn find(catalogue: &Catalogue, exchanges: &[Exchange]) -> Vec<Double> {
    let mut found = Vec::new();
    let mut start = 0;
    while start < exchanges.len() {
        let name = recording(&exchanges[start]);
        let len = exchanges[start..]
            .iter()
            .take_while(|x| recording(x) == name)
            .count();
        found.extend(find_in(catalogue, &exchanges[start..start + len]));
        start += len;
    }
    found
}

fn find_in(catalogue: &Catalogue, exchanges: &[Exchange]) -> Vec<Double> {
    let mut found = Vec::new();
    let mut orders: BTreeMap<String, &Exchange> = BTreeMap::new();
    // (order type, asset number) → the batch's exchange and its channelOrderId.
    let mut assets: BTreeMap<(String, String), (&Exchange, String)> = BTreeMap::new();
    // lock → its last applied change (disable or enable) and where.
    let mut locks: BTreeMap<String, (&'static str, &Exchange)> = BTreeMap::new();
    let mut members: BTreeMap<(String, String), &Exchange> = BTreeMap::new();
    for x in exchanges {
        let Some(op) = catalogue.find(x.operation.as_deref(), &x.method, &x.path) else {
            continue;
        };
        if !applied(catalogue, x, &op.id) {
            continue;
        }
        let mut double = |what: String, first: &Exchange| {
            found.push(Double {
                operation: op.id.clone(),
                what,
                first: first.source.clone(),
                second: x.source.clone(),
            });
        };
        let body = x.request.as_ref();
        match op.id.as_str() {
            "batchOrder" => {
                let channel_order = body
                    .and_then(|b| b.get("channelOrderId"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                if let Some(first) = orders.insert(channel_order.clone(), x) {
                    double(format!("channelOrderId {channel_order}"), first);
                    continue;
                }
                let list = body
                    .and_then(|b| b.get("orderList"))
                    .and_then(Value::as_array);
                for order in list.into_iter().flatten() {
                    let kind = order["orderType"].as_str().unwrap_or_default();
                    for asset in order["assets"].as_array().into_iter().flatten() {
                        for number in strings(asset.get("assetNos")) {
                            let key = (kind.to_string(), number.to_string());
                            match assets.get(&key) {
                                Some((first, other)) if *other != channel_order => {
                                    double(format!("{kind} of asset {number}"), first);
                                }
                                _ => {
                                    assets.insert(key, (x, channel_order.clone()));
                                }
                            }
                        }
                    }
                }
            }
            "disableLocks" | "enableLocks" => {
                let change = if op.id == "disableLocks" {
                    "disable"
                } else {
                    "enable"
                };
                for lock in strings(body.and_then(|b| b.get("assetNums"))) {
                    match locks.insert(lock.to_string(), (change, x)) {
                        Some((last, first)) if last == change => {
                            double(format!("{change} of lock {lock}"), first);
                        }
                        _ => {}
                    }
                }
            }
            "addMembers" => {
                let enterprise = after(&x.path, "enterprise").unwrap_or_default().to_string();
                let users = body
                    .and_then(|b| b.get("userList"))
                    .and_then(Value::as_array);
                for user in users.into_iter().flatten() {
                    let Some(name) = user.get("userName").and_then(Value::as_str) else {
                        continue;
                    };
                    let key = (enterprise.clone(), name.to_string());
                    if let Some(first) = members.insert(key, x) {
                        double(format!("member {name} in {enterprise}"), first);
                    }
                }
            }
            "deleteMember" => {
                let enterprise = after(&x.path, "enterprise").unwrap_or_default();
                members.retain(|(e, _), _| e != enterprise);
            }
            _ => {}
        }
    }
    found
}
