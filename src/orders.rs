//! Batch orders: constructors for the three order types and what every order has,
//! whatever its `orderType`.
//!
//! [`LicenseOrder`](crate::order::types::LicenseOrder) is generated as one variant per
//! order type (`spec/order.yaml`'s discriminated `oneOf`), each with the fields the
//! documents give it: a `new_buy` cannot be built without its required fields, and a
//! revocation needs none that it does not carry.

use crate::{
    LicenseType, OrderType,
    order::types::{
        DeleteAssetOrder, DeleteProductOrder, LicenseOrder, RevokedAsset, RevokedProductAsset,
        builder,
    },
};

macro_rules! shared {
    ($self:ident, $order:ident => $e:expr) => {
        match $self {
            LicenseOrder::NewBuy($order) => $e,
            LicenseOrder::DeleteAsset($order) => $e,
            LicenseOrder::DeleteProduct($order) => $e,
        }
    };
}

/// A delete order of type `$ty` with only its identifying fields; the order fields it
/// may carry besides are left out.
macro_rules! identified {
    ($ty:ident, $sequence:expr, $customer:expr, $enterprise:expr, $license:expr, $assets:expr) => {
        $ty {
            sequence: $sequence,
            customer_id: $customer.into(),
            enterprise_global_id: $enterprise.into(),
            license_type: $license,
            assets: $assets,
            address: None,
            admin_account: None,
            admin_cell_number: None,
            admin_email: None,
            admin_name: None,
            branch_code: None,
            branch_name: None,
            channel_customer_id: None,
            crm_customer_id: None,
            customer_name: None,
            customer_type: None,
            password_mobile: None,
            src_license_order_id: None,
        }
    };
}

impl LicenseOrder {
    /// A `new_buy` order: the builder of [`NewBuyOrder`](crate::order::types::NewBuyOrder),
    /// whose `try_into()` names the first required field left unset. With orders of other
    /// types in one batch: `order_list([buy.into(), revoke.into()])`.
    pub fn new_buy() -> builder::NewBuyOrder {
        builder::NewBuyOrder::default()
    }

    /// A `delete_asset` order: revokes `asset_nos` from the customer, with only the fields
    /// that identify the order. Set `src_license_order_id` on the result to scope the
    /// revocation to one order (required for cloud license types).
    ///
    /// ```
    /// use licensing_sdk::{LicenseType, order::types::LicenseOrder};
    ///
    /// let order = LicenseOrder::delete_asset(
    ///     2,
    ///     "C100001",
    ///     "EG-7f3a",
    ///     LicenseType::NormalRecoverUsbkey,
    ///     vec!["8000000001".to_string()],
    /// );
    /// let json = serde_json::to_value(&order).unwrap();
    /// assert_eq!(json["orderType"], "delete_asset");
    /// assert_eq!(json["assets"][0], serde_json::json!({"assetNos": ["8000000001"]}));
    /// assert!(json.get("adminEmail").is_none());
    /// ```
    ///
    /// The asset numbers may be strings or the [`ShellNumber`](crate::order::types::ShellNumber)s
    /// `allocate_shell_nums` returned, owned or borrowed (`&numbers[..2]`).
    pub fn delete_asset(
        sequence: i32,
        customer_id: impl Into<String>,
        enterprise_global_id: impl Into<String>,
        license_type: LicenseType,
        asset_nos: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let asset_nos = asset_nos.into_iter().map(Into::into).collect();
        Self::DeleteAsset(identified!(
            DeleteAssetOrder,
            sequence,
            customer_id,
            enterprise_global_id,
            license_type,
            vec![RevokedAsset { asset_nos }]
        ))
    }

    /// A `delete_product` order: revokes the products of each entry (the six documented
    /// fields, [`RevokedProduct`](crate::order::types::RevokedProduct)) from its assets,
    /// with only the fields that identify the order.
    pub fn delete_product(
        sequence: i32,
        customer_id: impl Into<String>,
        enterprise_global_id: impl Into<String>,
        license_type: LicenseType,
        entries: Vec<RevokedProductAsset>,
    ) -> Self {
        Self::DeleteProduct(identified!(
            DeleteProductOrder,
            sequence,
            customer_id,
            enterprise_global_id,
            license_type,
            entries
        ))
    }

    /// Scopes a revocation (or marks a transfer) to one license order:
    /// `srcLicenseOrderId`, which cloud license types require.
    #[must_use]
    pub fn with_src_license_order_id(mut self, id: impl Into<String>) -> Self {
        let id = Some(id.into());
        match &mut self {
            Self::NewBuy(o) => o.src_license_order_id = id,
            Self::DeleteAsset(o) => o.src_license_order_id = id,
            Self::DeleteProduct(o) => o.src_license_order_id = id,
        }
        self
    }

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
