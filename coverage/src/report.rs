//! The coverage of each operation and the totals.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::{
    Catalogue, Double, Exchange, Operation,
    catalogue::{Field, untagged},
    doubles,
};

/// `seen` of `of`, and the ratio (1 when there is nothing to see).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Ratio {
    pub seen: usize,
    pub of: usize,
}

impl Ratio {
    /// `seen / of`, 1.0 when `of` is 0.
    pub fn fraction(self) -> f64 {
        if self.of == 0 {
            1.0
        } else {
            self.seen as f64 / self.of as f64
        }
    }

    fn add(&mut self, seen: usize, of: usize) {
        self.seen += seen;
        self.of += of;
    }
}

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} ({:.0}%)",
            self.seen,
            self.of,
            self.fraction() * 100.0
        )
    }
}

/// The values of one request enum sent and never sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnumCoverage {
    /// The field (`?defaultCustomer`, `orderList[].orderType`).
    pub field: String,
    pub sent: Vec<String>,
    pub never_sent: Vec<String>,
}

/// What one operation was put through.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationCoverage {
    pub operation: String,
    pub calls: usize,
    /// Calls answered HTTP 200 with code `0`.
    pub succeeded: usize,
    /// Documented codes answered, and how often.
    pub codes_seen: BTreeMap<String, usize>,
    /// Documented codes never answered.
    pub codes_never_seen: Vec<String>,
    /// Codes answered that the documents do not give for the operation (not `0`).
    pub codes_undocumented: BTreeMap<String, usize>,
    pub enums: Vec<EnumCoverage>,
    /// Optional request fields sent at least once, and never.
    pub optional_sent: Vec<String>,
    pub optional_never_sent: Vec<String>,
    /// For a list operation: whether a page after the first was ever read.
    pub later_page_read: Option<bool>,
    /// Calls that repeat the operation's previous call (the same query but `g_nonce`, the
    /// same body) after it failed.
    pub retries: usize,
    /// The recorded exchanges, by source (first and last, for finding them).
    pub first: Option<String>,
}

/// The totals as ratios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Operations called at least once.
    pub operations: Ratio,
    /// Documented (operation, code) pairs answered at least once.
    pub codes: Ratio,
    /// Documented enum values sent at least once.
    pub enums: Ratio,
    /// Optional request fields sent at least once.
    pub optional: Ratio,
    /// List operations of which a later page was read.
    pub paging: Ratio,
    pub retries: usize,
    pub exchanges: usize,
    /// Exchanges that match no documented operation.
    pub unmatched: usize,
}

/// Coverage of a recording against the documents.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub totals: Totals,
    pub operations: Vec<OperationCoverage>,
    pub suspected_double_submissions: Vec<Double>,
}

/// Every field path a request sent, and the values of its scalars by untagged path.
#[derive(Default)]
struct Sent {
    paths: BTreeSet<String>,
    values: BTreeMap<String, BTreeSet<String>>,
}

impl Sent {
    fn scalar(&mut self, path: &str, value: &Value) {
        self.paths.insert(path.to_string());
        self.values
            .entry(untagged(path))
            .or_default()
            .insert(crate::text(value));
    }

    fn body(&mut self, op: &Operation, path: &str, value: &Value) {
        match value {
            Value::Object(map) => {
                if !path.is_empty() {
                    self.paths.insert(path.to_string());
                }
                for (k, v) in map {
                    let sub = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    self.body(op, &sub, v);
                }
            }
            Value::Array(items) => {
                self.paths.insert(path.to_string());
                let list = format!("{path}[]");
                let tag = op.tagged.get(&list);
                for item in items {
                    let item_path = match tag.and_then(|t| item.get(t)).and_then(Value::as_str) {
                        Some(tag) => format!("{path}[{tag}]"),
                        None => list.clone(),
                    };
                    self.body(op, &item_path, item);
                }
            }
            Value::Null => {}
            scalar => self.scalar(path, scalar),
        }
    }
}

/// The query without `g_nonce` and the body, for telling a repeat.
fn call_key(x: &Exchange) -> (Vec<(&str, &str)>, Option<&Value>) {
    let query = x
        .query
        .iter()
        .filter(|(n, _)| n != "g_nonce")
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    (query, x.request.as_ref())
}

impl Report {
    /// Counts `exchanges` (in the order they happened) against `catalogue`.
    pub fn new(catalogue: &Catalogue, exchanges: &[Exchange]) -> Self {
        let mut by_op: Vec<Vec<&Exchange>> = vec![Vec::new(); catalogue.operations.len()];
        let mut unmatched = 0;
        for x in exchanges {
            let found = catalogue
                .find(x.operation.as_deref(), &x.method, &x.path)
                .and_then(|op| catalogue.operations.iter().position(|o| o.id == op.id));
            match found {
                Some(i) => by_op[i].push(x),
                None => unmatched += 1,
            }
        }
        let mut totals = Totals {
            exchanges: exchanges.len(),
            unmatched,
            ..Totals::default()
        };
        let operations: Vec<OperationCoverage> = catalogue
            .operations
            .iter()
            .zip(&by_op)
            .map(|(op, calls)| {
                let cover = coverage(op, calls);
                totals.operations.add(usize::from(cover.calls > 0), 1);
                totals.codes.add(cover.codes_seen.len(), op.codes.len());
                for e in &cover.enums {
                    totals
                        .enums
                        .add(e.sent.len(), e.sent.len() + e.never_sent.len());
                }
                totals.optional.add(
                    cover.optional_sent.len(),
                    cover.optional_sent.len() + cover.optional_never_sent.len(),
                );
                if let Some(read) = cover.later_page_read {
                    totals.paging.add(usize::from(read), 1);
                }
                totals.retries += cover.retries;
                cover
            })
            .collect();
        Report {
            totals,
            operations,
            suspected_double_submissions: doubles::find(catalogue, exchanges),
        }
    }
}

fn coverage(op: &Operation, calls: &[&Exchange]) -> OperationCoverage {
    let mut sent = Sent::default();
    let mut codes_seen = BTreeMap::new();
    let mut codes_undocumented = BTreeMap::new();
    let mut later_page_read = false;
    let mut retries = 0;
    let mut previous: Option<&Exchange> = None;
    for x in calls {
        for (name, value) in &x.query {
            sent.scalar(&format!("?{name}"), &Value::String(value.clone()));
        }
        if let Some(body) = &x.request {
            sent.body(op, "", body);
        }
        if let Some(code) = &x.code {
            if op.codes.contains(code) {
                *codes_seen.entry(code.clone()).or_insert(0) += 1;
            } else if code != "0" {
                *codes_undocumented.entry(code.clone()).or_insert(0) += 1;
            }
        }
        if let Some(param) = &op.page_param
            && x.succeeded()
            && x.param(param)
                .and_then(|p| p.parse::<u64>().ok())
                .is_some_and(|p| p > 1)
        {
            later_page_read = true;
        }
        if let Some(p) = previous
            && !p.succeeded()
            && call_key(p) == call_key(x)
        {
            retries += 1;
        }
        previous = Some(x);
    }
    let enums = op
        .enums
        .iter()
        .map(|(field, documented)| {
            let values = sent.values.get(field);
            let (sent, never_sent) = documented
                .iter()
                .cloned()
                .partition(|v| values.is_some_and(|s| s.contains(v)));
            EnumCoverage {
                field: field.clone(),
                sent,
                never_sent,
            }
        })
        .collect();
    let (optional_sent, optional_never_sent): (Vec<&Field>, Vec<&Field>) = op
        .fields
        .iter()
        .filter(|f| !f.required && f.path != "?g_nonce")
        .partition(|f| sent.paths.contains(&f.path));
    let names = |fields: Vec<&Field>| fields.into_iter().map(|f| f.path.clone()).collect();
    OperationCoverage {
        operation: op.id.clone(),
        calls: calls.len(),
        succeeded: calls.iter().filter(|x| x.succeeded()).count(),
        codes_never_seen: op
            .codes
            .iter()
            .filter(|c| !codes_seen.contains_key(*c))
            .cloned()
            .collect(),
        codes_seen,
        codes_undocumented,
        enums,
        optional_sent: names(optional_sent),
        optional_never_sent: names(optional_never_sent),
        later_page_read: op.page_param.as_ref().map(|_| later_page_read),
        retries,
        first: calls.first().map(|x| x.source.clone()),
    }
}
