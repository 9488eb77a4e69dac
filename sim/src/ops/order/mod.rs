//! The order service: enterprise accounts, batch license orders, locks, virtual assets
//! and asset-number allocation.
//!
//! Every validation failure answers `13004`, the one business code the order document
//! lists besides `500`; the cause names the field and the rule.

use std::collections::HashSet;

mod accounts;
mod apply;
mod assets;
mod batch;
mod check;
mod locks;

pub(crate) use accounts::{
    bind_enterprise, create_enterprise, query_enterprise, update_enterprise,
};
pub(crate) use assets::{allocate_shell_nums, list_virtual_assets};
pub(crate) use batch::batch_order;
pub(crate) use locks::{disable_locks, enable_locks};
#[allow(unused_imports)]
use {apply::*, batch::*, check::*};

use super::{Call, Db, Failure, Service, Settings};
use crate::state::{
    Allocator, Asset, Customer, LicenseOrder, MerchandiseRecord, NewCustomer, NewMember, Origin,
    ProductRecord, State, is_asset_number, rules::is_mobile_number,
};
use licensing_sdk::{
    DefaultCustomer, KeyChipType, LockStatus, OrderType, order::types as o,
    validate::is_cloud_license,
};

/// Asset numbers one `allocateShellNums` call may ask for (the document shows no bound).
const MAX_ALLOCATION: u32 = 1000;
/// Locks one disable or enable call may name.
const MAX_LOCKS: usize = 1000;
/// Orders in one batch (the document shows no bound; large enough for the 50,000-order
/// month-end batches the benchmarks send, about 125 MiB of JSON).
const MAX_ORDERS: usize = 50_000;
/// Product instances one batch may create (asset numbers × products): ten per order of
/// the largest batch.
const MAX_PRODUCT_COPIES: usize = 500_000;
/// How deep packages may nest.
const MAX_PACKAGE_DEPTH: usize = 8;

fn invalid(cause: impl Into<String>) -> Failure {
    Service::Order.invalid(cause)
}

fn body<T: serde::de::DeserializeOwned + 'static>(call: &Call) -> Result<T, Failure> {
    call.body().map_err(invalid)
}

fn non_empty(field: &str, value: &str) -> Result<(), Failure> {
    if value.trim().is_empty() {
        return Err(invalid(format!("{field} must not be empty")));
    }
    Ok(())
}

fn customer_record(state: &State, customer: &Customer) -> o::EnterpriseCustomer {
    // Customers created by `createEnterprise` have no channel: empty strings.
    let (channel_code, channel_customer_id) = customer.channel.clone().unwrap_or_default();
    o::EnterpriseCustomer {
        customer_id: customer.id.clone(),
        channel_code,
        channel_customer_id,
        enterprise_global_id: customer.enterprise.clone(),
        enterprise_name: state
            .enterprises
            .get(&customer.enterprise)
            .map(|e| e.name.clone())
            .unwrap_or_default(),
        is_default: customer.is_default,
    }
}
