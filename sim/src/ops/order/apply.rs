//! Applying a checked batch: new assets, revoked assets and products.

use super::*;

pub(super) fn apply(
    state: &mut State,
    req: &o::BatchOrderRequest,
    order: &o::LicenseOrder,
    plan: Plan<'_>,
    now: i64,
) -> o::BatchOrderResultItem {
    let order_id = format!("LO-{:06}", state.next_id());
    state.orders.insert(
        order_id.clone(),
        LicenseOrder {
            customer: order.customer_id().to_string(),
            order_type: order.order_type(),
        },
    );
    match plan {
        Plan::NewBuy(buy_order, targets) => {
            let origin = std::sync::Arc::new(Origin {
                order: order_id.clone(),
                channel_code: req.channel_code.clone(),
                channel_order_id: req.channel_order_id.clone(),
                license_type: buy_order.license_type.clone(),
                customer: buy_order.customer_id.clone(),
                src_order: buy_order
                    .src_license_order_id
                    .clone()
                    .filter(|s| !s.trim().is_empty()),
                created: now,
            });
            for (num, entry) in targets {
                buy(state, buy_order, &origin, num, entry);
            }
        }
        Plan::DeleteAsset(nums) => {
            for num in nums {
                state.revoke_asset(num);
            }
        }
        Plan::DeleteProduct(targets) => {
            for (num, matches) in targets {
                if let Some(asset) = state.assets.get_mut(num) {
                    let keep = |p: &ProductRecord| !matches.iter().any(|m| m.hits(p));
                    asset.products.retain(keep);
                    for package in &mut asset.merchandises {
                        package.retain_products(&keep);
                    }
                    asset.updated = now;
                }
            }
        }
    }
    o::BatchOrderResultItem {
        sequence: order.sequence(),
        license_order_id: order_id,
        customer_id: order.customer_id().to_string(),
    }
}

/// Puts an asset entry's products and packages on asset `num`, creating the asset on its
/// first purchase.
pub(super) fn buy(
    state: &mut State,
    order: &o::NewBuyOrder,
    origin: &std::sync::Arc<Origin>,
    num: &str,
    entry: &o::Asset,
) {
    if !state.assets.contains_key(num) {
        let id = format!("A-{}", state.next_id());
        state.asset_ids.insert(id.clone(), num.to_string());
        if let Some(ent) = state.enterprises.get_mut(&order.enterprise_global_id) {
            ent.assets.insert(num.to_string());
        }
        state.assets.insert(
            num.to_string(),
            Asset {
                id,
                num: num.to_string(),
                customer: order.customer_id.clone(),
                enterprise: order.enterprise_global_id.clone(),
                license_type: order.license_type.clone(),
                orders: Default::default(),
                extends: Vec::new(),
                limit_start: None,
                limit_end: None,
                lent_lock: false,
                locked: false,
                created: origin.created,
                updated: origin.created,
                holder: None,
                assigned: None,
                products: Vec::new(),
                merchandises: Vec::new(),
                lent_into: None,
            },
        );
    }
    let products: Vec<_> = entry
        .products
        .iter()
        .map(|p| ProductRecord {
            id: state.next_id(),
            origin: origin.clone(),
            product: p.clone(),
            merchandise: None,
        })
        .collect();
    let packages: Vec<_> = entry
        .merchandises
        .iter()
        .map(|m| package(state, origin, m, None))
        .collect();
    let asset = state
        .assets
        .get_mut(num)
        .expect("the asset exists: created above");
    asset.orders.insert(origin.order.clone());
    for extension in &entry.asset_extend_list {
        match asset
            .extends
            .iter_mut()
            .find(|e| e.extend_code == extension.extend_code)
        {
            Some(existing) => existing.extend_value.clone_from(&extension.extend_value),
            None => asset.extends.push(extension.clone()),
        }
    }
    asset.limit_start = entry.limit_start_date.or(asset.limit_start);
    asset.limit_end = entry.limit_end_date.or(asset.limit_end);
    if entry.borrowed_usb_key == Some(true) {
        asset.lent_lock = true;
    }
    asset.products.extend(products);
    asset.merchandises.extend(packages);
    asset.updated = origin.created;
}

pub(super) fn package(
    state: &mut State,
    origin: &std::sync::Arc<Origin>,
    m: &o::Merchandise,
    parent: Option<i64>,
) -> MerchandiseRecord {
    let id = state.next_id();
    let products = m
        .license_order_product_list
        .iter()
        .map(|p| ProductRecord {
            id: state.next_id(),
            origin: origin.clone(),
            product: p.clone(),
            merchandise: Some(m.crm_product_id.clone()),
        })
        .collect();
    let children = m
        .children
        .iter()
        .flatten()
        .map(|c| package(state, origin, c, Some(id)))
        .collect();
    MerchandiseRecord {
        id,
        parent,
        origin: origin.clone(),
        num: m.merchandise_num.clone(),
        name: m.merchandise_name.clone(),
        parent_num: m.parent_merchandise_num.clone(),
        time_expression: m.time_duration_expression.clone(),
        products,
        children,
    }
}
