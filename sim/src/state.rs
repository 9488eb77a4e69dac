//! The in-memory model both services act on: enterprises and their customers, license
//! orders, assets with their products and packages, employees and loans, plus the
//! asset-number allocator.

use std::{collections::BTreeSet, fmt, str::FromStr};

use licensing_sdk::{LicenseType, OrderType, order::types as o};
use serde::{Deserialize, Serialize, Serializer};

/// The state's maps and sets: std's, hashed with foldhash (seeded per process), which
/// costs a fraction of SipHash on the short ids every request looks up.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// See [`HashMap`].
pub(crate) type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// The region marker: the first digit of every asset number. In an exported state (see
/// [`Simulator::export_state`](crate::Simulator::export_state)) it is written `domestic` or
/// `singapore`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// `8`, domestic.
    #[default]
    Domestic,
    /// `6`, Singapore.
    Singapore,
}

impl Region {
    /// The marker digit.
    pub fn marker(self) -> char {
        match self {
            Region::Domestic => '8',
            Region::Singapore => '6',
        }
    }

    fn index(self) -> usize {
        match self {
            Region::Domestic => 0,
            Region::Singapore => 1,
        }
    }

    fn of_marker(marker: char) -> Option<Self> {
        match marker {
            '8' => Some(Region::Domestic),
            '6' => Some(Region::Singapore),
            _ => None,
        }
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Region::Domestic => "domestic",
            Region::Singapore => "singapore",
        })
    }
}

/// A region name that is neither `domestic`/`8` nor `singapore`/`6`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseRegionError(String);

impl fmt::Display for ParseRegionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown region {:?} (expected domestic, 8, singapore or 6)",
            self.0
        )
    }
}

impl std::error::Error for ParseRegionError {}

impl FromStr for Region {
    type Err = ParseRegionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "domestic" | "8" => Ok(Region::Domestic),
            "singapore" | "6" => Ok(Region::Singapore),
            _ => Err(ParseRegionError(s.to_string())),
        }
    }
}

/// The largest 9-digit sequence number.
const LAST_SEQUENCE: u32 = 999_999_999;

/// Hands out asset numbers: the region marker and a 9-digit sequence of its own per
/// region, so a number is never handed out twice.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "AllocatorDoc", into = "AllocatorDoc")]
pub(crate) struct Allocator {
    region: Region,
    last: [u32; 2],
}

/// The allocator as exported: the last number handed out in each region.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AllocatorDoc {
    region: Region,
    last: LastNumbers,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LastNumbers {
    domestic: u32,
    singapore: u32,
}

impl From<AllocatorDoc> for Allocator {
    fn from(doc: AllocatorDoc) -> Self {
        Self {
            region: doc.region,
            last: [doc.last.domestic, doc.last.singapore],
        }
    }
}

impl From<Allocator> for AllocatorDoc {
    fn from(a: Allocator) -> Self {
        Self {
            region: a.region,
            last: LastNumbers {
                domestic: a.last[0],
                singapore: a.last[1],
            },
        }
    }
}

impl Allocator {
    pub fn new(region: Region) -> Self {
        Self {
            region,
            last: [0, 0],
        }
    }

    pub fn region(&self) -> Region {
        self.region
    }

    pub fn set_region(&mut self, region: Region) {
        self.region = region;
    }

    /// Whether every sequence is within the 9 digits; the JSON path of the first that is not.
    pub fn check(&self) -> Result<(), Invalid> {
        for region in [Region::Domestic, Region::Singapore] {
            let last = self.last[region.index()];
            if last > LAST_SEQUENCE {
                return Err(Invalid::new(
                    format!("allocator.last.{region}"),
                    format!("{last} is more than 9 digits"),
                ));
            }
        }
        Ok(())
    }

    /// The next `size` numbers of the current region, or `None` once the 9-digit
    /// sequence would run out.
    pub fn allocate(&mut self, size: u32) -> Option<Vec<String>> {
        let last = &mut self.last[self.region.index()];
        let end = last.checked_add(size).filter(|&end| end <= LAST_SEQUENCE)?;
        let marker = self.region.marker() as u8;
        let numbers = (*last + 1..=end).map(|n| asset_number(marker, n)).collect();
        *last = end;
        Some(numbers)
    }

    /// Whether `number` is a 10-digit number this allocator has handed out.
    pub fn allocated(&self, number: &str) -> bool {
        let mut chars = number.chars();
        let Some(region) = chars.next().and_then(Region::of_marker) else {
            return false;
        };
        let rest = chars.as_str();
        rest.len() == 9
            && rest.bytes().all(|b| b.is_ascii_digit())
            && rest
                .parse::<u32>()
                .is_ok_and(|n| n >= 1 && n <= self.last[region.index()])
    }
}

/// `marker` then `n` in 9 digits, zero-padded (`n` < 10⁹): what `format!("{marker}{n:09}")`
/// writes, without the formatting machinery, which cost about a thousand instructions per
/// number (a batch of numbers is allocated per call).
fn asset_number(marker: u8, mut n: u32) -> String {
    let mut digits = [b'0'; 10];
    digits[0] = marker;
    for d in digits[1..].iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    debug_assert_eq!(n, 0, "a sequence number has at most 9 digits");
    std::str::from_utf8(&digits)
        .expect("ASCII digits")
        .to_owned()
}

/// Whether a string is an asset number's shape: exactly 10 ASCII digits.
pub(crate) fn is_asset_number(s: &str) -> bool {
    s.len() == 10 && s.bytes().all(|b| b.is_ascii_digit())
}

/// A mobile number as the simulator accepts it (the documents give no format): an
/// optional `+` and 6 to 15 digits.
pub(crate) fn is_mobile_number(s: &str) -> bool {
    let digits = s.strip_prefix('+').unwrap_or(s);
    (6..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a license type is a physical lock (the `*usbkey` types).
pub(crate) fn is_physical_lock(license_type: &LicenseType) -> bool {
    license_type.as_str().ends_with("usbkey")
}

/// Whether a license type is a refillable lock (`normal_recover_*`).
pub(crate) fn is_refillable_lock(license_type: &LicenseType) -> bool {
    matches!(
        license_type,
        LicenseType::NormalRecoverUsbkey | LicenseType::NormalRecoverLanUsbkey
    )
}

/// An enterprise main account.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Enterprise {
    pub id: i64,
    pub name: String,
    /// Appended to account names: `alice` becomes `alice@<code>`.
    pub code: String,
    /// The default customer first.
    pub customers: Vec<String>,
    /// Employee global ids, oldest first.
    pub members: Vec<String>,
    /// Numbers of its active assets.
    #[serde(skip)]
    pub assets: BTreeSet<String>,
    /// Employees added through `addMembers` (the trial member accounts).
    #[serde(skip)]
    pub trial_members: usize,
}

/// A licensing customer of an enterprise.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Customer {
    pub id: String,
    pub enterprise: String,
    pub name: String,
    pub branch: String,
    pub address: Option<String>,
    /// The CRM customer id (`createEnterprise`, `updateEnterprise`).
    #[serde(default)]
    pub crm: Option<String>,
    /// The channel customer bound to it (`bindEnterprise`).
    #[serde(default, with = "channel")]
    pub channel: Option<(String, String)>,
    /// The enterprise's first customer is its default one.
    #[serde(skip)]
    pub is_default: bool,
}

/// A channel customer as exported: `{"code": …, "customerId": …}`.
mod channel {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Channel<S> {
        code: S,
        customer_id: S,
    }

    pub fn serialize<S: Serializer>(
        channel: &Option<(String, String)>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        channel
            .as_ref()
            .map(|(code, customer_id)| Channel { code, customer_id })
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<(String, String)>, D::Error> {
        let channel = Option::<Channel<String>>::deserialize(deserializer)?;
        Ok(channel.map(|c| (c.code, c.customer_id)))
    }
}

/// A license order of a batch.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct LicenseOrder {
    pub customer: String,
    pub order_type: OrderType,
}

/// Where a product or package came from.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Origin {
    pub order: String,
    pub channel_code: String,
    pub channel_order_id: String,
    pub license_type: LicenseType,
    pub customer: String,
    pub src_order: Option<String>,
    pub created: i64,
}

/// A product instance on an asset.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ProductRecord {
    pub id: i64,
    pub origin: Origin,
    pub product: o::Product,
    /// The CRM id of the package it belongs to.
    pub merchandise: Option<String>,
}

/// A package instance on an asset, with nested packages.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct MerchandiseRecord {
    pub id: i64,
    pub parent: Option<i64>,
    pub origin: Origin,
    pub num: String,
    pub name: String,
    pub parent_num: String,
    pub time_expression: String,
    pub products: Vec<ProductRecord>,
    pub children: Vec<MerchandiseRecord>,
}

impl MerchandiseRecord {
    /// Every product of the package and its nested packages.
    pub fn all_products(&self) -> Box<dyn Iterator<Item = &ProductRecord> + '_> {
        Box::new(
            self.products
                .iter()
                .chain(self.children.iter().flat_map(|c| c.all_products())),
        )
    }

    /// Keeps only the products `keep` selects, here and in nested packages.
    pub fn retain_products(&mut self, keep: &dyn Fn(&ProductRecord) -> bool) {
        self.products.retain(|p| keep(p));
        for child in &mut self.children {
            child.retain_products(keep);
        }
    }
}

/// An asset (a lock, certificate, cloud account…) with the products bought onto it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Asset {
    pub id: String,
    pub num: String,
    pub customer: String,
    pub enterprise: String,
    pub license_type: LicenseType,
    /// Orders that put products on it.
    pub orders: BTreeSet<String>,
    pub extends: Vec<o::AssetExtension>,
    pub limit_start: Option<i64>,
    pub limit_end: Option<i64>,
    /// Bought as a lent lock (`borrowedUsbKey`).
    pub lent_lock: bool,
    pub locked: bool,
    pub created: i64,
    pub updated: i64,
    /// The employee it is assigned to, and when.
    pub holder: Option<String>,
    pub assigned: Option<i64>,
    pub products: Vec<ProductRecord>,
    pub merchandises: Vec<MerchandiseRecord>,
    /// The lent lock its rights were lent into (kept in `loans`).
    #[serde(skip)]
    pub lent_into: Option<String>,
}

impl Asset {
    /// Big-customer lock, as this simulator defines it: a physical lock bought with an
    /// asset restriction period (`limitStartDate` and `limitEndDate` on the order's asset).
    pub fn is_big_customer_lock(&self) -> bool {
        is_physical_lock(&self.license_type)
            && self.limit_start.is_some()
            && self.limit_end.is_some()
    }

    /// Only refillable locks and big-customer locks can be disabled and enabled.
    pub fn lock_state_changeable(&self) -> bool {
        is_refillable_lock(&self.license_type) || self.is_big_customer_lock()
    }

    /// Every product instance, in packages or not.
    pub fn all_products(&self) -> impl Iterator<Item = &ProductRecord> {
        self.products
            .iter()
            .chain(self.merchandises.iter().flat_map(|m| m.all_products()))
    }

    /// The 9 digits after the region marker.
    pub fn shell_number(&self) -> &str {
        self.num.get(1..).unwrap_or("")
    }
}

/// An employee of an enterprise.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Member {
    pub id: i64,
    pub user_id: i64,
    pub global_id: String,
    pub enterprise: String,
    /// The account as given, without the enterprise code.
    pub account: String,
    pub password: String,
    pub name: String,
    pub department: Option<i64>,
    pub remark: Option<String>,
    pub mobile: Option<String>,
    pub trial: bool,
    pub created: i64,
    pub updated: i64,
    /// Numbers of the assets assigned to it (kept as the assets' `holder`).
    #[serde(skip)]
    pub assets: BTreeSet<String>,
    /// The lent lock it borrows with (kept in `loans`).
    #[serde(skip)]
    pub borrow: Option<String>,
}

impl Member {
    /// The account with the enterprise code appended.
    pub fn user_name(&self, enterprise_code: &str) -> String {
        format!("{}@{enterprise_code}", self.account)
    }
}

/// Rights of an employee's assets lent into a lent lock.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Loan {
    pub member: String,
    /// Ids of the assets lent.
    pub assets: BTreeSet<String>,
}

/// What a new employee is created with.
#[derive(Debug)]
pub(crate) struct NewMember {
    pub account: String,
    pub password: String,
    pub name: String,
    pub department: Option<i64>,
    pub remark: Option<String>,
    pub mobile: Option<String>,
    pub trial: bool,
}

/// What a new customer is created with.
#[derive(Debug)]
pub(crate) struct NewCustomer {
    pub name: String,
    pub branch: String,
    pub address: Option<String>,
    pub crm: Option<String>,
    pub channel: Option<(String, String)>,
}

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
    /// Employee global ids by lower-cased account (without enterprise code).
    #[serde(skip)]
    pub accounts: HashMap<String, BTreeSet<String>>,
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

    /// A new enterprise main account; its code is derived from the name.
    pub fn new_enterprise(&mut self, name: &str) -> String {
        let n = self.next_id();
        let global_id = format!("EG-{n:06}");
        let stem: String = name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(12)
            .collect::<String>()
            .to_ascii_lowercase();
        let code = if stem.is_empty() || self.enterprise_codes.contains(&stem) {
            format!("{stem}e{n}")
        } else {
            stem
        };
        self.enterprise_codes.insert(code.clone());
        self.enterprise_by_name
            .insert(name.to_string(), global_id.clone());
        self.enterprises.insert(
            global_id.clone(),
            Enterprise {
                id: 3000 + n,
                name: name.to_string(),
                code,
                customers: Vec::new(),
                members: Vec::new(),
                assets: BTreeSet::new(),
                trial_members: 0,
            },
        );
        global_id
    }

    /// A new customer of an enterprise; the enterprise's first customer is its default.
    pub fn new_customer(&mut self, enterprise: &str, new: NewCustomer) -> String {
        let id = format!("C{}", 100_000 + self.next_id());
        let Some(ent) = self.enterprises.get_mut(enterprise) else {
            unreachable!("customers are only created for existing enterprises");
        };
        let is_default = ent.customers.is_empty();
        ent.customers.push(id.clone());
        if let Some(crm) = &new.crm {
            self.customer_by_crm.insert(crm.clone(), id.clone());
        }
        let crm = new.crm;
        if let Some(channel) = &new.channel {
            self.customer_by_channel.insert(channel, id.clone());
        }
        self.customers.insert(
            id.clone(),
            Customer {
                id: id.clone(),
                enterprise: enterprise.to_string(),
                name: new.name,
                branch: new.branch,
                address: new.address,
                crm,
                channel: new.channel,
                is_default,
            },
        );
        id
    }

    /// A new employee of an enterprise, created at `now` (the simulator clock).
    pub fn new_member(&mut self, enterprise: &str, new: NewMember, now: i64) -> String {
        let n = self.next_id();
        let global_id = format!("MG-{n:06}");
        let Some(ent) = self.enterprises.get_mut(enterprise) else {
            unreachable!("members are only created for existing enterprises");
        };
        ent.members.push(global_id.clone());
        if new.trial {
            ent.trial_members += 1;
        }
        self.accounts
            .entry(new.account.to_ascii_lowercase())
            .or_default()
            .insert(global_id.clone());
        self.members.insert(
            global_id.clone(),
            Member {
                id: 1000 + n,
                user_id: 2000 + n,
                global_id: global_id.clone(),
                enterprise: enterprise.to_string(),
                account: new.account,
                password: new.password,
                name: new.name,
                department: new.department,
                remark: new.remark,
                mobile: new.mobile,
                trial: new.trial,
                created: now,
                updated: now,
                assets: BTreeSet::new(),
                borrow: None,
            },
        );
        global_id
    }

    /// The employees with this account (case-insensitive), in any enterprise.
    pub fn members_with_account(&self, account: &str) -> impl Iterator<Item = &Member> {
        self.accounts
            .get(&account.to_ascii_lowercase())
            .into_iter()
            .flatten()
            .filter_map(|id| self.members.get(id))
    }

    /// Ends the loan held by a lent lock: the lent assets get their rights back.
    pub fn end_loan(&mut self, lock: &str) {
        let Some(loan) = self.loans.remove(lock) else {
            return;
        };
        for id in &loan.assets {
            if let Some(asset) = self.asset_ids.get(id).and_then(|n| self.assets.get_mut(n)) {
                asset.lent_into = None;
            }
        }
        if let Some(member) = self.members.get_mut(&loan.member) {
            member.borrow = None;
        }
    }

    /// Removes an employee: its assets are unassigned (at `now`) and its loan ends.
    pub fn remove_member(&mut self, global_id: &str, now: i64) {
        let Some(member) = self.members.remove(global_id) else {
            return;
        };
        if let Some(lock) = &member.borrow {
            self.end_loan(lock);
        }
        let account = member.account.to_ascii_lowercase();
        if let Some(ids) = self.accounts.get_mut(&account) {
            ids.remove(global_id);
            if ids.is_empty() {
                self.accounts.remove(&account);
            }
        }
        for num in &member.assets {
            if let Some(asset) = self.assets.get_mut(num) {
                asset.holder = None;
                asset.assigned = Some(now);
            }
        }
        if let Some(ent) = self.enterprises.get_mut(&member.enterprise) {
            ent.members.retain(|m| m != global_id);
            if member.trial {
                ent.trial_members = ent.trial_members.saturating_sub(1);
            }
        }
    }

    /// Revokes an asset: it disappears from every listing, its holder loses it, loans it
    /// takes part in end, and its number is never sold again.
    pub fn revoke_asset(&mut self, num: &str) {
        if self.loans.contains_key(num) {
            self.end_loan(num);
        }
        let Some(asset) = self.assets.remove(num) else {
            return;
        };
        if let Some(lock) = &asset.lent_into
            && let Some(loan) = self.loans.get_mut(lock)
        {
            loan.assets.remove(&asset.id);
            if loan.assets.is_empty() {
                self.end_loan(lock);
            }
        }
        if let Some(member) = asset.holder.as_ref().and_then(|h| self.members.get_mut(h)) {
            member.assets.remove(num);
        }
        if let Some(ent) = self.enterprises.get_mut(&asset.enterprise) {
            ent.assets.remove(num);
        }
        self.asset_ids.remove(&asset.id);
        self.revoked.insert(num.to_string());
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

/// The keys of a map in order, so that the first broken rule reported is always the same.
fn keys<V>(map: &HashMap<String, V>) -> Vec<String> {
    let mut keys: Vec<_> = map.keys().cloned().collect();
    keys.sort_unstable();
    keys
}

/// The counter value an id of the simulator's own forms was made from (`MG-000012` →
/// 12); ids of other forms (an imported document may use any) say nothing.
fn id_number(id: &str) -> Option<i64> {
    ["EG-", "MG-", "LO-", "A-"]
        .iter()
        .find_map(|prefix| id.strip_prefix(prefix))
        .or_else(|| id.strip_prefix('C'))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<i64>().ok())
        .map(|n| if id.starts_with('C') { n - 100_000 } else { n })
}

impl State {
    /// Checks an imported state and rebuilds everything it does not export (the indexes,
    /// the employees' assets and loans, each enterprise's assets and trial members, the
    /// default customers). Every reference must lead to a record that points back, ids
    /// must be unique and below the id counter, and asset numbers must have been handed
    /// out by `allocator`; the first broken rule is reported by its JSON path.
    pub fn reindex(&mut self, allocator: &Allocator) -> Result<(), Invalid> {
        let counter = self.sequence;
        if counter < 0 {
            return Err(Invalid::new("state.sequence", "must not be negative"));
        }
        let below_counter = |path: String, id: &str, n: Option<i64>| match n {
            Some(n) if n > counter => Err(Invalid::new(
                path,
                format!(
                    "{id} is numbered {n}, above state.sequence ({counter}): a later id would repeat it"
                ),
            )),
            _ => Ok(()),
        };
        for index in [
            &mut self.enterprise_by_name,
            &mut self.customer_by_crm,
            &mut self.asset_ids,
        ] {
            index.clear();
        }
        self.enterprise_codes.clear();
        self.customer_by_channel.clear();
        self.accounts.clear();

        for id in keys(&self.enterprises) {
            let at = format!("state.enterprises.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
            let ent = &self.enterprises[&id];
            if let Some(other) = self.enterprise_by_name.insert(ent.name.clone(), id.clone()) {
                return Err(Invalid::new(
                    format!("{at}.name"),
                    format!("{:?} is also the name of enterprise {other}", ent.name),
                ));
            }
            if ent.code.is_empty() || !self.enterprise_codes.insert(ent.code.clone()) {
                return Err(Invalid::new(
                    format!("{at}.code"),
                    format!("{:?} is empty or the code of another enterprise", ent.code),
                ));
            }
        }

        // Who each enterprise lists, to look up (a list may be 100,000 employees long).
        let enterprises = std::mem::take(&mut self.enterprises);
        let listed = |list: fn(&Enterprise) -> &Vec<String>| -> HashSet<(&str, &str)> {
            enterprises
                .iter()
                .flat_map(|(id, e)| list(e).iter().map(move |c| (id.as_str(), c.as_str())))
                .collect()
        };
        let listed_customers = listed(|e| &e.customers);
        let listed_members = listed(|e| &e.members);

        for id in keys(&self.customers) {
            let at = format!("state.customers.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
            let customer = &self.customers[&id];
            if customer.id != id {
                return Err(Invalid::new(format!("{at}.id"), "differs from its key"));
            }
            if !listed_customers.contains(&(customer.enterprise.as_str(), id.as_str())) {
                return Err(Invalid::new(
                    format!("{at}.enterprise"),
                    format!(
                        "no enterprise {:?} lists this customer among its customers",
                        customer.enterprise
                    ),
                ));
            }
            if let Some(crm) = &customer.crm
                && let Some(other) = self.customer_by_crm.insert(crm.clone(), id.clone())
            {
                return Err(Invalid::new(
                    format!("{at}.crm"),
                    format!("{crm:?} is also the CRM id of customer {other}"),
                ));
            }
            if let Some(channel) = &customer.channel
                && let Some(other) = self.customer_by_channel.insert(channel, id.clone())
            {
                return Err(Invalid::new(
                    format!("{at}.channel"),
                    format!("the channel customer is also bound to customer {other}"),
                ));
            }
        }
        for ent in enterprises.values() {
            for (i, id) in ent.customers.iter().enumerate() {
                if let Some(customer) = self.customers.get_mut(id) {
                    customer.is_default = i == 0;
                }
            }
        }

        for id in keys(&self.orders) {
            let at = format!("state.orders.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
            let customer = &self.orders[&id].customer;
            if !self.customers.contains_key(customer) {
                return Err(Invalid::new(
                    format!("{at}.customer"),
                    format!("no customer {customer:?}"),
                ));
            }
        }

        for id in keys(&self.members) {
            let at = format!("state.members.{id}");
            below_counter(at.clone(), &id, id_number(&id))?;
            let member = &self.members[&id];
            if member.global_id != id {
                return Err(Invalid::new(
                    format!("{at}.globalId"),
                    "differs from its key",
                ));
            }
            if !listed_members.contains(&(member.enterprise.as_str(), id.as_str())) {
                return Err(Invalid::new(
                    format!("{at}.enterprise"),
                    format!(
                        "no enterprise {:?} lists this employee among its members",
                        member.enterprise
                    ),
                ));
            }
            if member.account.is_empty() {
                return Err(Invalid::new(format!("{at}.account"), "must not be empty"));
            }
            let same = self
                .accounts
                .entry(member.account.to_ascii_lowercase())
                .or_default();
            if let Some(other) = same
                .iter()
                .find(|other| self.members[*other].enterprise == member.enterprise)
            {
                return Err(Invalid::new(
                    format!("{at}.account"),
                    format!(
                        "{:?} is also the account of employee {other} of the same enterprise",
                        member.account
                    ),
                ));
            }
            same.insert(id.clone());
        }
        drop((listed_customers, listed_members));
        self.enterprises = enterprises;

        // Lists the records above point back to: checked after them, so that a record
        // naming an unknown enterprise is reported as such.
        for id in keys(&self.enterprises) {
            let at = format!("state.enterprises.{id}");
            let ent = &self.enterprises[&id];
            let mut seen = HashSet::default();
            for (i, customer) in ent.customers.iter().enumerate() {
                let points_back = self
                    .customers
                    .get(customer)
                    .is_some_and(|c| c.enterprise == id);
                if !points_back || !seen.insert(customer) {
                    return Err(Invalid::new(
                        format!("{at}.customers[{i}]"),
                        format!(
                            "{customer:?} is not a customer of this enterprise, or listed twice"
                        ),
                    ));
                }
            }
            let mut seen = HashSet::default();
            for (i, member) in ent.members.iter().enumerate() {
                let points_back = self.members.get(member).is_some_and(|m| m.enterprise == id);
                if !points_back || !seen.insert(member) {
                    return Err(Invalid::new(
                        format!("{at}.members[{i}]"),
                        format!(
                            "{member:?} is not an employee of this enterprise, or listed twice"
                        ),
                    ));
                }
            }
        }

        for member in self.members.values_mut() {
            member.assets.clear();
            member.borrow = None;
        }
        for ent in self.enterprises.values_mut() {
            ent.assets.clear();
            ent.trial_members = 0;
        }
        for member in self.members.values() {
            if member.trial
                && let Some(ent) = self.enterprises.get_mut(&member.enterprise)
            {
                ent.trial_members += 1;
            }
        }

        for num in keys(&self.assets) {
            let at = format!("state.assets.{num}");
            let asset = &self.assets[&num];
            if asset.num != num {
                return Err(Invalid::new(format!("{at}.num"), "differs from its key"));
            }
            if !allocator.allocated(&num) {
                return Err(Invalid::new(
                    format!("{at}.num"),
                    "not a number the allocator has handed out (see allocator.last)",
                ));
            }
            if self.revoked.contains(&num) {
                return Err(Invalid::new(format!("{at}.num"), "is also revoked"));
            }
            below_counter(format!("{at}.id"), &asset.id, id_number(&asset.id))?;
            if let Some(other) = self.asset_ids.insert(asset.id.clone(), num.clone()) {
                return Err(Invalid::new(
                    format!("{at}.id"),
                    format!("{:?} is also the id of asset {other}", asset.id),
                ));
            }
            if !self.enterprises.contains_key(&asset.enterprise) {
                return Err(Invalid::new(
                    format!("{at}.enterprise"),
                    format!("no enterprise {:?}", asset.enterprise),
                ));
            }
            if self
                .customers
                .get(&asset.customer)
                .is_none_or(|c| c.enterprise != asset.enterprise)
            {
                return Err(Invalid::new(
                    format!("{at}.customer"),
                    format!(
                        "no customer {:?} of enterprise {}",
                        asset.customer, asset.enterprise
                    ),
                ));
            }
            for (i, order) in asset.orders.iter().enumerate() {
                if !self.orders.contains_key(order) {
                    return Err(Invalid::new(
                        format!("{at}.orders[{i}]"),
                        format!("no order {order:?}"),
                    ));
                }
            }
            if let Some(holder) = &asset.holder
                && self
                    .members
                    .get(holder)
                    .is_none_or(|m| m.enterprise != asset.enterprise)
            {
                return Err(Invalid::new(
                    format!("{at}.holder"),
                    format!("no employee {holder:?} of enterprise {}", asset.enterprise),
                ));
            }
            for (i, product) in asset.products.iter().enumerate() {
                self.check_product(&format!("{at}.products[{i}]"), product)?;
            }
            for (i, package) in asset.merchandises.iter().enumerate() {
                self.check_package(&format!("{at}.merchandises[{i}]"), package)?;
            }
            if let Some(holder) = asset.holder.clone()
                && let Some(member) = self.members.get_mut(&holder)
            {
                member.assets.insert(num.clone());
            }
            if let Some(ent) = self.enterprises.get_mut(&asset.enterprise) {
                ent.assets.insert(num.clone());
            }
        }

        let mut revoked: Vec<_> = self.revoked.iter().collect();
        revoked.sort_unstable();
        for (i, num) in revoked.into_iter().enumerate() {
            if !allocator.allocated(num) {
                return Err(Invalid::new(
                    format!("state.revoked[{i}]"),
                    format!("{num:?} is not a number the allocator has handed out"),
                ));
            }
        }

        for asset in self.assets.values_mut() {
            asset.lent_into = None;
        }
        for lock in keys(&self.loans) {
            let at = format!("state.loans.{lock}");
            let loan = &self.loans[&lock];
            let Some(lent_lock) = self.assets.get(&lock).filter(|a| a.lent_lock) else {
                return Err(Invalid::new(at, "no active lent lock has this number"));
            };
            let enterprise = lent_lock.enterprise.clone();
            match self.members.get(&loan.member) {
                Some(m) if m.enterprise != enterprise => {
                    return Err(Invalid::new(
                        format!("{at}.member"),
                        format!("not an employee of the lock's enterprise {enterprise}"),
                    ));
                }
                Some(m) if m.borrow.is_some() => {
                    return Err(Invalid::new(
                        format!("{at}.member"),
                        format!("{} already borrows with another lent lock", loan.member),
                    ));
                }
                Some(_) => {}
                None => {
                    return Err(Invalid::new(
                        format!("{at}.member"),
                        format!("no employee {:?}", loan.member),
                    ));
                }
            }
            if loan.assets.is_empty() {
                return Err(Invalid::new(format!("{at}.assets"), "must not be empty"));
            }
            for (i, id) in loan.assets.iter().enumerate() {
                let asset = self
                    .asset_ids
                    .get(id)
                    .filter(|n| **n != lock)
                    .and_then(|n| self.assets.get_mut(n))
                    .filter(|a| a.enterprise == enterprise);
                let Some(asset) = asset.filter(|a| a.lent_into.is_none()) else {
                    return Err(Invalid::new(
                        format!("{at}.assets[{i}]"),
                        format!(
                            "no other asset {id:?} of enterprise {enterprise}, or one already lent"
                        ),
                    ));
                };
                asset.lent_into = Some(lock.clone());
            }
            let member = loan.member.clone();
            if let Some(m) = self.members.get_mut(&member) {
                m.borrow = Some(lock.clone());
            }
        }
        Ok(())
    }

    fn check_product(&self, at: &str, product: &ProductRecord) -> Result<(), Invalid> {
        self.check_origin(at, &product.origin)?;
        if product.id > self.sequence {
            return Err(Invalid::new(
                format!("{at}.id"),
                format!("{} is above state.sequence ({})", product.id, self.sequence),
            ));
        }
        Ok(())
    }

    fn check_package(&self, at: &str, package: &MerchandiseRecord) -> Result<(), Invalid> {
        self.check_origin(at, &package.origin)?;
        if package.id > self.sequence {
            return Err(Invalid::new(
                format!("{at}.id"),
                format!("{} is above state.sequence ({})", package.id, self.sequence),
            ));
        }
        for (i, product) in package.products.iter().enumerate() {
            self.check_product(&format!("{at}.products[{i}]"), product)?;
        }
        for (i, child) in package.children.iter().enumerate() {
            self.check_package(&format!("{at}.children[{i}]"), child)?;
        }
        Ok(())
    }

    fn check_origin(&self, at: &str, origin: &Origin) -> Result<(), Invalid> {
        if !self.orders.contains_key(&origin.order) {
            return Err(Invalid::new(
                format!("{at}.origin.order"),
                format!("no order {:?}", origin.order),
            ));
        }
        if !self.customers.contains_key(&origin.customer) {
            return Err(Invalid::new(
                format!("{at}.origin.customer"),
                format!("no customer {:?}", origin.customer),
            ));
        }
        Ok(())
    }

    /// Removes an enterprise and everything of it: customers, their orders, its assets
    /// (their numbers are never sold again, as if revoked), employees and loans. Returns
    /// whether there was such an enterprise.
    pub fn remove_enterprise(&mut self, global_id: &str) -> bool {
        let Some(ent) = self.enterprises.remove(global_id) else {
            return false;
        };
        if self.enterprise_by_name.get(&ent.name).map(String::as_str) == Some(global_id) {
            self.enterprise_by_name.remove(&ent.name);
        }
        self.enterprise_codes.remove(&ent.code);
        let locks: Vec<String> = self
            .loans
            .iter()
            .filter(|(lock, loan)| ent.assets.contains(*lock) || ent.members.contains(&loan.member))
            .map(|(lock, _)| lock.clone())
            .collect();
        for lock in locks {
            self.end_loan(&lock);
        }
        for num in &ent.assets {
            if let Some(asset) = self.assets.remove(num) {
                self.asset_ids.remove(&asset.id);
                self.revoked.insert(num.clone());
            }
        }
        for id in &ent.members {
            let Some(member) = self.members.remove(id) else {
                continue;
            };
            let account = member.account.to_ascii_lowercase();
            if let Some(ids) = self.accounts.get_mut(&account) {
                ids.remove(id);
                if ids.is_empty() {
                    self.accounts.remove(&account);
                }
            }
        }
        let customers: HashSet<&String> = ent.customers.iter().collect();
        for id in &ent.customers {
            if let Some(customer) = self.customers.remove(id) {
                if let Some(crm) = &customer.crm {
                    self.customer_by_crm.remove(crm);
                }
                if let Some(channel) = &customer.channel {
                    self.customer_by_channel.remove(channel);
                }
            }
        }
        self.orders
            .retain(|_, order| !customers.contains(&order.customer));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_numbers_are_written_as_format_writes_them() {
        for n in [
            1,
            9,
            10,
            99,
            12_345,
            100_000_000,
            987_654_321,
            LAST_SEQUENCE,
        ] {
            for marker in ['8', '6'] {
                assert_eq!(asset_number(marker as u8, n), format!("{marker}{n:09}"));
            }
        }
    }

    #[test]
    fn allocation_per_region() {
        let mut a = Allocator::new(Region::Domestic);
        assert_eq!(a.allocate(2).unwrap(), ["8000000001", "8000000002"]);
        a.set_region(Region::Singapore);
        assert_eq!(a.allocate(1).unwrap(), ["6000000001"]);
        assert!(a.allocated("8000000002"));
        assert!(!a.allocated("8000000003"));
        assert!(a.allocated("6000000001"));
        assert!(!a.allocated("9000000001"));
        assert!(!a.allocated("800000001"));
        a.last[1] = LAST_SEQUENCE - 1;
        assert!(a.allocate(2).is_none(), "sequence exhausted");
        assert_eq!(a.allocate(1).unwrap(), ["6999999999"]);
    }

    #[test]
    fn regions_parse() {
        assert_eq!("8".parse(), Ok(Region::Domestic));
        assert_eq!("Singapore".parse(), Ok(Region::Singapore));
        assert!("mars".parse::<Region>().is_err());
    }
}

/// Customers by channel (`channelCode`, `channelCustomerId`), looked up by the two
/// strings as they are: `queryEnterprise` reads it on every call, without building a key.
#[derive(Debug, Default, Clone)]
pub(crate) struct ChannelIndex(HashMap<String, HashMap<String, String>>);

impl ChannelIndex {
    pub fn get(&self, code: &str, customer: &str) -> Option<&String> {
        self.0.get(code)?.get(customer)
    }

    /// Indexes `id` under `channel`; returns the customer indexed there before, if any.
    pub fn insert(&mut self, (code, customer): &(String, String), id: String) -> Option<String> {
        self.0
            .entry(code.clone())
            .or_default()
            .insert(customer.clone(), id)
    }

    pub fn remove(&mut self, (code, customer): &(String, String)) {
        if let Some(customers) = self.0.get_mut(code) {
            customers.remove(customer);
            if customers.is_empty() {
                self.0.remove(code);
            }
        }
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}
