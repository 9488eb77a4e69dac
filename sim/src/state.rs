//! The in-memory model both services act on: enterprises and their customers, license
//! orders, assets with their products and packages, employees and loans, plus the
//! asset-number allocator.

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    fmt,
    str::FromStr,
};

use licensing_sdk::{LicenseType, OrderType, order::types as o};

/// The region marker: the first digit of every asset number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
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
#[derive(Debug)]
pub(crate) struct Allocator {
    region: Region,
    last: [u32; 2],
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

    /// The next `size` numbers of the current region, or `None` once the 9-digit
    /// sequence would run out.
    pub fn allocate(&mut self, size: u32) -> Option<Vec<String>> {
        let last = &mut self.last[self.region.index()];
        let end = last.checked_add(size).filter(|&end| end <= LAST_SEQUENCE)?;
        let marker = self.region.marker();
        let numbers = (*last + 1..=end)
            .map(|n| format!("{marker}{n:09}"))
            .collect();
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
#[derive(Debug)]
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
    pub assets: BTreeSet<String>,
    /// Employees added through `addMembers` (the trial member accounts).
    pub trial_members: usize,
}

/// A licensing customer of an enterprise.
#[derive(Debug)]
pub(crate) struct Customer {
    pub id: String,
    pub enterprise: String,
    pub name: String,
    pub branch: String,
    pub address: Option<String>,
    pub channel: Option<(String, String)>,
    pub is_default: bool,
}

/// A license order of a batch.
#[derive(Debug)]
pub(crate) struct LicenseOrder {
    pub customer: String,
    pub order_type: OrderType,
}

/// Where a product or package came from.
#[derive(Clone, Debug)]
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
#[derive(Clone, Debug)]
pub(crate) struct ProductRecord {
    pub id: i64,
    pub origin: Origin,
    pub product: o::Product,
    /// The CRM id of the package it belongs to.
    pub merchandise: Option<String>,
}

/// A package instance on an asset, with nested packages.
#[derive(Clone, Debug)]
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
#[derive(Debug)]
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
    /// The lent lock its rights were lent into.
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
#[derive(Debug)]
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
    /// Numbers of the assets assigned to it.
    pub assets: BTreeSet<String>,
    /// The lent lock it borrows with.
    pub borrow: Option<String>,
}

impl Member {
    /// The account with the enterprise code appended.
    pub fn user_name(&self, enterprise_code: &str) -> String {
        format!("{}@{enterprise_code}", self.account)
    }
}

/// Rights of an employee's assets lent into a lent lock.
#[derive(Debug)]
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
#[derive(Debug, Default)]
pub(crate) struct State {
    sequence: i64,
    pub enterprises: HashMap<String, Enterprise>,
    pub enterprise_by_name: HashMap<String, String>,
    enterprise_codes: HashSet<String>,
    pub customers: HashMap<String, Customer>,
    pub customer_by_crm: HashMap<String, String>,
    pub customer_by_channel: HashMap<(String, String), String>,
    pub orders: HashMap<String, LicenseOrder>,
    /// Active assets by number.
    pub assets: HashMap<String, Asset>,
    /// Asset numbers by asset id.
    pub asset_ids: HashMap<String, String>,
    /// Numbers of revoked assets: never sold again.
    pub revoked: HashSet<String>,
    pub members: HashMap<String, Member>,
    /// Employee global ids by lower-cased account (without enterprise code).
    pub accounts: HashMap<String, BTreeSet<String>>,
    /// Loans by lent lock number.
    pub loans: HashMap<String, Loan>,
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
        if let Some(channel) = &new.channel {
            self.customer_by_channel.insert(channel.clone(), id.clone());
        }
        self.customers.insert(
            id.clone(),
            Customer {
                id: id.clone(),
                enterprise: enterprise.to_string(),
                name: new.name,
                branch: new.branch,
                address: new.address,
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

#[cfg(test)]
mod tests {
    use super::*;

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
