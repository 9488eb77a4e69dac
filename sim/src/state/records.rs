//! The records both services keep, as they are exported.

use std::{collections::BTreeSet, sync::Arc};

use licensing_sdk::{LicenseType, OrderType, order::types as o};
use serde::{Deserialize, Serialize};

use super::{
    HashMap,
    rules::{is_physical_lock, is_refillable_lock},
};

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
    /// Shared by every product and package one order put on an asset: a batch of 50,000
    /// orders would otherwise copy each order's six strings once per product and package.
    pub origin: Arc<Origin>,
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
    pub origin: Arc<Origin>,
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
    pub orders: SortedSet,
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
/// A small set of strings as a sorted `Vec`: an asset has one order or a few, and a
/// B-tree's node for one costs some 280 bytes (50,000 assets: 14 MB). Written as the
/// sorted array a `BTreeSet` is, and read the same way: sorted, duplicates dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct SortedSet(Vec<String>);

impl SortedSet {
    /// Adds `value`; false if it was there.
    pub fn insert(&mut self, value: String) -> bool {
        match self.0.binary_search(&value) {
            Ok(_) => false,
            Err(at) => {
                // Most assets get one order: room for one, not the four a first push makes.
                if self.0.capacity() == 0 {
                    self.0.reserve_exact(1);
                }
                self.0.insert(at, value);
                true
            }
        }
    }

    pub fn contains(&self, value: &str) -> bool {
        self.0.binary_search_by(|v| v.as_str().cmp(value)).is_ok()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, String> {
        self.0.iter()
    }
}

impl<'de> Deserialize<'de> for SortedSet {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut values = Vec::<String>::deserialize(deserializer)?;
        values.sort_unstable();
        values.dedup();
        Ok(Self(values))
    }
}

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

#[cfg(test)]
mod tests {
    use super::SortedSet;

    #[test]
    fn a_sorted_set_reads_and_writes_as_a_btree_set_does() {
        let mut set: SortedSet = serde_json::from_str(r#"["LO-3","LO-1","LO-3","LO-2"]"#).unwrap();
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            r#"["LO-1","LO-2","LO-3"]"#
        );
        assert!(set.insert("LO-0".into()));
        assert!(!set.insert("LO-2".into()), "already there");
        assert!(set.contains("LO-0") && set.contains("LO-3") && !set.contains("LO-4"));
        let as_btree: std::collections::BTreeSet<String> =
            serde_json::from_str(&serde_json::to_string(&set).unwrap()).unwrap();
        assert_eq!(
            set.iter().cloned().collect::<Vec<_>>(),
            as_btree.into_iter().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_first_order_takes_room_for_one() {
        let mut set = SortedSet::default();
        set.insert("LO-2".into());
        assert_eq!(
            set.0.capacity(),
            1,
            "an asset with one order holds one slot"
        );
        set.insert("LO-1".into());
        assert_eq!(set.iter().collect::<Vec<_>>(), ["LO-1", "LO-2"]);
    }
}
