//! What every order of a batch has, whatever its `orderType`.
//!
//! [`LicenseOrder`](crate::order::types::LicenseOrder) is generated as one variant per
//! order type (`spec/order.yaml`'s discriminated `oneOf`), each with the fields the
//! documents give it. The fields all three share are read here without a `match`.

use crate::{LicenseType, OrderType, order::types::LicenseOrder};

macro_rules! shared {
    ($self:ident, $order:ident => $e:expr) => {
        match $self {
            LicenseOrder::NewBuy($order) => $e,
            LicenseOrder::DeleteAsset($order) => $e,
            LicenseOrder::DeleteProduct($order) => $e,
        }
    };
}

impl LicenseOrder {
    /// The order's `orderType`.
    pub fn order_type(&self) -> OrderType {
        match self {
            Self::NewBuy(_) => OrderType::NewBuy,
            Self::DeleteAsset(_) => OrderType::DeleteAsset,
            Self::DeleteProduct(_) => OrderType::DeleteProduct,
        }
    }

    /// `sequence`: the order's number within the batch.
    pub fn sequence(&self) -> i32 {
        shared!(self, o => o.sequence)
    }

    /// `customerId`: the licensing platform customer the order sells to or revokes from.
    pub fn customer_id(&self) -> &str {
        shared!(self, o => &o.customer_id)
    }

    /// `enterpriseGlobalId`: the customer's enterprise main account.
    pub fn enterprise_global_id(&self) -> &str {
        shared!(self, o => &o.enterprise_global_id)
    }

    /// `licenseType`.
    pub fn license_type(&self) -> &LicenseType {
        shared!(self, o => &o.license_type)
    }

    /// `srcLicenseOrderId` as sent (`None` when absent).
    pub fn src_license_order_id(&self) -> Option<&str> {
        shared!(self, o => o.src_license_order_id.as_deref())
    }

    /// Each asset entry's numbers and how many products it carries (`None` for a
    /// `delete_asset` entry, which carries none), whatever the order's shape.
    pub fn asset_entries(&self) -> Vec<AssetEntry<'_>> {
        match self {
            Self::NewBuy(o) => o
                .assets
                .iter()
                .map(|a| AssetEntry {
                    asset_nos: &a.asset_nos,
                    products: Some(a.products.len()),
                })
                .collect(),
            Self::DeleteAsset(o) => o
                .assets
                .iter()
                .map(|a| AssetEntry {
                    asset_nos: &a.asset_nos,
                    products: None,
                })
                .collect(),
            Self::DeleteProduct(o) => o
                .assets
                .iter()
                .map(|a| AssetEntry {
                    asset_nos: &a.asset_nos,
                    products: Some(a.products.len()),
                })
                .collect(),
        }
    }
}

/// One asset entry of an order ([`LicenseOrder::asset_entries`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AssetEntry<'a> {
    /// `assetNos`.
    pub asset_nos: &'a [String],
    /// How many products the entry carries; `None` where its shape has none.
    pub products: Option<usize>,
}
