//! The coverage of each operation and the totals, counted exchange by exchange
//! ([`Tally`]): what it keeps is bounded by the documents (the fields, enum values and
//! codes each operation has) and by what the report lists, never by the exchanges.

use std::{
    borrow::Cow,
    collections::{BTreeMap, BTreeSet, HashSet},
    hash::{BuildHasher, DefaultHasher, Hash, Hasher, RandomState},
};

use serde::Serialize;

use crate::{
    Catalogue, Double, Exchange, Operation,
    catalogue::{Field, untagged},
    doubles::{self, Finder},
    record::Body,
    walk::{Container, Scalar, Sink, Tags, Walk},
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
    /// At most [`doubles::MAX_LISTED`], in the order the second of each happened.
    pub suspected_double_submissions: Vec<Double>,
    /// Suspected double submissions found beyond those listed.
    pub doubles_not_listed: usize,
    /// Per operation, the applied writes the double-submission check could not read: no
    /// body recorded (or only a large one's size, without a summary), a batch without a
    /// `channelOrderId`, or more keys than it remembers.
    pub doubles_unchecked: BTreeMap<String, usize>,
}

impl Report {
    /// Counts `exchanges` (in the order they happened) against `catalogue`.
    pub fn new(catalogue: &Catalogue, exchanges: &[Exchange]) -> Self {
        let mut tally = Tally::new(catalogue);
        for x in exchanges {
            tally.add(x);
        }
        tally.report()
    }

    /// What a reader of the doubles must know besides the list: how many applied writes
    /// could not be checked (per operation), and how many doubles are not listed.
    pub fn doubles_note(&self) -> Option<String> {
        let mut parts = Vec::new();
        let unchecked: usize = self.doubles_unchecked.values().sum();
        if unchecked > 0 {
            let per: Vec<String> = self
                .doubles_unchecked
                .iter()
                .map(|(op, n)| format!("{op} {n}"))
                .collect();
            parts.push(format!(
                "{unchecked} applied {} could not be checked for double submission ({}): the recording kept no body (or only a large body's size, without a summary), or a batch had no channelOrderId.",
                if unchecked == 1 { "write" } else { "writes" },
                per.join(", ")
            ));
        }
        if self.doubles_not_listed > 0 {
            parts.push(format!(
                "{} more suspected double submissions were found than the {} listed.",
                self.doubles_not_listed,
                self.suspected_double_submissions.len()
            ));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// A report counted one exchange at a time, in the order they happened: what it keeps
/// does not grow with the exchanges (see [`doubles`] for what the double check keeps).
pub struct Tally<'c> {
    catalogue: &'c Catalogue,
    ops: Vec<OpTally<'c>>,
    exchanges: usize,
    unmatched: usize,
    doubles: Finder,
    /// Keys the digests of requests, told apart from one run to the next.
    digests: RandomState,
}

/// What one operation's calls have shown so far.
struct OpTally<'c> {
    op: &'c Operation,
    /// The documented request fields (`?name` for a query parameter).
    documented: HashSet<&'c str>,
    /// The lists named by tags, by their untagged path.
    tags: Tags,
    calls: usize,
    succeeded: usize,
    codes_seen: BTreeMap<String, usize>,
    codes_undocumented: BTreeMap<String, usize>,
    sent: Sent,
    later_page_read: bool,
    retries: usize,
    /// The last call: whether it succeeded, and the digest of its query (but `g_nonce`)
    /// and body.
    previous: Option<(bool, u64)>,
    first: Option<String>,
}

/// The documented fields sent, and the documented enum values, by untagged path.
#[derive(Default)]
struct Sent {
    paths: BTreeSet<String>,
    values: BTreeMap<String, BTreeSet<String>>,
}

/// Reads a body's fields into an operation's [`Sent`], and its digest.
struct Cover<'a, 'c> {
    op: &'c Operation,
    documented: &'a HashSet<&'c str>,
    sent: &'a mut Sent,
    digest: &'a mut DefaultHasher,
}

impl Cover<'_, '_> {
    fn path(&mut self, path: &str) {
        if self.documented.contains(path) && !self.sent.paths.contains(path) {
            self.sent.paths.insert(path.to_string());
        }
    }
}

impl Sink for Cover<'_, '_> {
    fn container(&mut self, path: &str, kind: Container) {
        (path, kind).hash(&mut *self.digest);
        if !path.is_empty() {
            self.path(path);
        }
    }

    fn scalar(&mut self, path: &str, value: Scalar<'_>) {
        let text = value.text();
        (path, matches!(value, Scalar::Str(_)), &*text).hash(&mut *self.digest);
        self.path(path);
        let field: Cow<str> = if path.contains('[') {
            Cow::Owned(untagged(path))
        } else {
            Cow::Borrowed(path)
        };
        if let Some(documented) = self.op.enums.get(&*field)
            && documented.contains(&*text)
        {
            let values = self.sent.values.entry(field.into_owned()).or_default();
            if !values.contains(&*text) {
                values.insert(text.into_owned());
            }
        }
    }
}

/// Whether `x`, an exchange of `op`, was applied: answered code `0`, or the operation's
/// partial-success code.
fn applied(op: &Operation, x: &Exchange) -> bool {
    x.status != 0
        && x.code
            .as_deref()
            .is_some_and(|c| c == "0" || Some(c) == op.partial_code.as_deref())
}

impl<'c> Tally<'c> {
    /// Nothing counted yet.
    pub fn new(catalogue: &'c Catalogue) -> Self {
        let ops = catalogue
            .operations
            .iter()
            .map(|op| {
                let mut tags: Tags = op
                    .tagged
                    .iter()
                    .map(|(list, tag)| (untagged(list), tag.clone()))
                    .collect();
                if op.id == "batchOrder" {
                    let (list, tag) = doubles::ORDER_TAG;
                    tags.entry(list.to_string())
                        .or_insert_with(|| tag.to_string());
                }
                OpTally {
                    op,
                    documented: op.fields.iter().map(|f| f.path.as_str()).collect(),
                    tags,
                    calls: 0,
                    succeeded: 0,
                    codes_seen: BTreeMap::new(),
                    codes_undocumented: BTreeMap::new(),
                    sent: Sent::default(),
                    later_page_read: false,
                    retries: 0,
                    previous: None,
                    first: None,
                }
            })
            .collect();
        Tally {
            catalogue,
            ops,
            exchanges: 0,
            unmatched: 0,
            doubles: Finder::default(),
            digests: RandomState::new(),
        }
    }

    /// Counts `x`, the exchange after those counted so far.
    pub fn add(&mut self, x: &Exchange) {
        self.exchanges += 1;
        let found = self
            .catalogue
            .find(x.operation.as_deref(), &x.method, &x.path)
            .and_then(|op| self.catalogue.operations.iter().position(|o| o.id == op.id));
        let Some(i) = found else {
            self.unmatched += 1;
            return;
        };
        let t = &mut self.ops[i];
        let op = t.op;
        t.calls += 1;
        if t.first.is_none() {
            t.first = Some(x.source.clone());
        }
        let mut digest = self.digests.build_hasher();
        for (name, value) in &x.query {
            let path = format!("?{name}");
            if t.documented.contains(path.as_str()) {
                t.sent.paths.insert(path.clone());
            }
            if let Some(documented) = op.enums.get(&path)
                && documented.contains(value)
            {
                t.sent.values.entry(path).or_default().insert(value.clone());
            }
            if name != "g_nonce" {
                (name, value).hash(&mut digest);
            }
        }
        let applied = applied(op, x);
        let checked = applied && doubles::checks(&op.id);
        match &x.request {
            Body::Json(text) => {
                let walk = Walk::new(text, &t.tags);
                if let Some(walk) = &walk {
                    walk.fields(&mut Cover {
                        op,
                        documented: &t.documented,
                        sent: &mut t.sent,
                        digest: &mut digest,
                    });
                }
                if checked {
                    self.doubles.add(op, applied, x, walk.as_ref());
                }
            }
            body => {
                body.hash(&mut digest);
                if checked {
                    let walk = doubles::readable(body).and_then(|s| Walk::new(s, &t.tags));
                    self.doubles.add(op, applied, x, walk.as_ref());
                }
            }
        }
        if !checked {
            // The double check forgets a recording's keys when the next begins.
            self.doubles.add(op, false, x, None);
        }
        let t = &mut self.ops[i];
        if let Some(code) = &x.code {
            if op.codes.contains(code) {
                *t.codes_seen.entry(code.clone()).or_insert(0) += 1;
            } else if code != "0" {
                *t.codes_undocumented.entry(code.clone()).or_insert(0) += 1;
            }
        }
        if x.succeeded() {
            t.succeeded += 1;
        }
        if let Some(param) = &op.page_param
            && x.succeeded()
            && x.param(param)
                .and_then(|p| p.parse::<u64>().ok())
                .is_some_and(|p| p > 1)
        {
            t.later_page_read = true;
        }
        let key = digest.finish();
        if let Some((succeeded, previous)) = t.previous
            && !succeeded
            && previous == key
        {
            t.retries += 1;
        }
        t.previous = Some((x.succeeded(), key));
    }

    /// The report of what was counted.
    pub fn report(self) -> Report {
        let mut totals = Totals {
            exchanges: self.exchanges,
            unmatched: self.unmatched,
            ..Totals::default()
        };
        let operations: Vec<OperationCoverage> = self
            .ops
            .into_iter()
            .map(|t| {
                let documented_codes = t.op.codes.len();
                let cover = t.coverage();
                totals.operations.add(usize::from(cover.calls > 0), 1);
                totals.codes.add(cover.codes_seen.len(), documented_codes);
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
            suspected_double_submissions: self.doubles.found,
            doubles_not_listed: self.doubles.not_listed,
            doubles_unchecked: self.doubles.unchecked,
        }
    }
}

impl OpTally<'_> {
    fn coverage(self) -> OperationCoverage {
        let op = self.op;
        let enums = op
            .enums
            .iter()
            .map(|(field, documented)| {
                let values = self.sent.values.get(field);
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
            .partition(|f| self.sent.paths.contains(&f.path));
        let names = |fields: Vec<&Field>| fields.into_iter().map(|f| f.path.clone()).collect();
        OperationCoverage {
            operation: op.id.clone(),
            calls: self.calls,
            succeeded: self.succeeded,
            codes_never_seen: op
                .codes
                .iter()
                .filter(|c| !self.codes_seen.contains_key(*c))
                .cloned()
                .collect(),
            codes_seen: self.codes_seen,
            codes_undocumented: self.codes_undocumented,
            enums,
            optional_sent: names(optional_sent),
            optional_never_sent: names(optional_never_sent),
            later_page_read: op.page_param.as_ref().map(|_| self.later_page_read),
            retries: self.retries,
            first: self.first,
        }
    }
}
