//! The in-memory model both services act on: enterprises and their customers, license
//! orders, assets with their products and packages, employees and loans, plus the
//! asset-number allocator.

mod accounts;
mod allocator;
mod assets;
mod check;
pub(crate) mod clock;
pub(crate) mod document;
mod members;
mod records;
pub(crate) mod rules;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize, Serializer};

pub(crate) use allocator::{Allocator, is_asset_number};
pub use allocator::{ParseRegionError, Region};
pub(crate) use records::*;

/// The state's maps and sets: std's, hashed with foldhash (seeded per process), which
/// costs a fraction of SipHash on the short ids every request looks up.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// See [`HashMap`].
pub(crate) type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
/// Everything both services know.
///
/// Exported as the records alone, keyed and sorted by id; the indexes (`skip`) are
/// rebuilt by [`State::reindex`], which also refuses references that lead nowhere.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub(crate) struct State {
    sequence: i64,
    #[serde(serialize_with = "sorted")]
    pub enterprises: HashMap<String, Enterprise>,
    #[serde(skip)]
    pub enterprise_by_name: HashMap<String, String>,
    #[serde(skip)]
    enterprise_codes: HashSet<String>,
    #[serde(serialize_with = "sorted")]
    pub customers: HashMap<String, Customer>,
    #[serde(skip)]
    pub customer_by_crm: HashMap<String, String>,
    #[serde(skip)]
    pub customer_by_channel: ChannelIndex,
    #[serde(serialize_with = "sorted")]
    pub orders: HashMap<String, LicenseOrder>,
    /// Active assets by number.
    #[serde(serialize_with = "sorted")]
    pub assets: HashMap<String, Asset>,
    /// Asset numbers by asset id.
    #[serde(skip)]
    pub asset_ids: HashMap<String, String>,
    /// Numbers of revoked assets: never sold again.
    #[serde(serialize_with = "sorted_set")]
    pub revoked: HashSet<String>,
    #[serde(serialize_with = "sorted")]
    pub members: HashMap<String, Member>,
    /// Employee global ids by lower-cased account (without enterprise code), then by
    /// enterprise: an account names at most one employee of an enterprise, and checking
    /// that is one lookup where the same names recur across many enterprises.
    #[serde(skip)]
    pub accounts: HashMap<String, BTreeMap<String, String>>,
    /// Loans by lent lock number.
    #[serde(serialize_with = "sorted")]
    pub loans: HashMap<String, Loan>,
}

/// Sorted by key, so that the same state always exports the same document.
fn sorted<S: Serializer, V: Serialize>(
    map: &HashMap<String, V>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    serializer.collect_map(entries)
}

fn sorted_set<S: Serializer>(set: &HashSet<String>, serializer: S) -> Result<S::Ok, S::Error> {
    let mut items: Vec<_> = set.iter().collect();
    items.sort_unstable();
    serializer.collect_seq(items)
}

impl State {
    /// One counter for every id: ids are unique across kinds and never reused.
    pub fn next_id(&mut self) -> i64 {
        self.sequence += 1;
        self.sequence
    }

    /// Makes room for `orders` more orders, `assets` more assets and `members` more
    /// employees at once. The maps would otherwise double their way there, rehashing at
    /// every step, and every table they outgrow stays with the allocator after it is
    /// freed: 30 MB of a 50,000-asset seed's peak.
    pub fn reserve(&mut self, orders: usize, assets: usize, members: usize) {
        self.orders.reserve(orders);
        self.assets.reserve(assets);
        self.asset_ids.reserve(assets);
        self.members.reserve(members);
        self.accounts.reserve(members);
    }
}

/// A state that breaks a rule or holds a reference that leads nowhere: the JSON path of
/// the field in the exported document, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub path: String,
    pub message: String,
}

impl Invalid {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}
