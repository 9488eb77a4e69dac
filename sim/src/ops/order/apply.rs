//! Applying a checked batch: new assets, revoked assets and products.

use super::*;

pub(super) fn apply(
    state: &mut State,
    batch: &Batch,
    order: o::LicenseOrder,
    step: Step,
    now: i64,
) -> o::BatchOrderResultItem {
    let order_id = format!("LO-{:06}", state.next_id());
    let item = o::BatchOrderResultItem {
        sequence: order.sequence(),
        license_order_id: order_id.clone(),
        customer_id: order.customer_id().to_string(),
    };
    state.orders.insert(
        order_id.clone(),
        LicenseOrder {
            customer: item.customer_id.clone(),
            order_type: order.order_type(),
        },
    );
    match (step, order) {
        (Step::NewBuy, o::LicenseOrder::NewBuy(mut buy_order)) => {
            let origin = std::sync::Arc::new(Origin {
                order: order_id,
                channel_code: batch.channel_code.clone(),
                channel_order_id: batch.channel_order_id.clone(),
                license_type: buy_order.license_type.clone(),
                customer: buy_order.customer_id.clone(),
                src_order: buy_order
                    .src_license_order_id
                    .clone()
                    .filter(|s| !s.trim().is_empty()),
                created: now,
            });
            // Every number of an entry gets its products: copies for all but the last,
            // which takes the entry's own.
            for mut entry in std::mem::take(&mut buy_order.assets) {
                let nums = std::mem::take(&mut entry.asset_nos);
                let Some((last, rest)) = nums.split_last() else {
                    continue;
                };
                for num in rest {
                    buy(state, &buy_order, &origin, num, entry.clone());
                }
                buy(state, &buy_order, &origin, last, entry);
            }
        }
        (Step::DeleteAsset(nums), _) => {
            for num in nums {
                state.revoke_asset(&num);
            }
        }
        (Step::DeleteProduct(targets), _) => {
            for (num, matches) in targets {
                if let Some(asset) = state.assets.get_mut(&num) {
                    let keep = |p: &ProductRecord| !matches.iter().any(|m| m.hits(p));
                    asset.products.retain(keep);
                    for package in &mut asset.merchandises {
                        package.retain_products(&keep);
                    }
                    asset.updated = now;
                }
            }
        }
        (Step::NewBuy, _) => unreachable!("a sale's step is made from a new_buy order"),
    }
    item
}

pub(super) fn buy(
    state: &mut State,
    order: &o::NewBuyOrder,
    origin: &std::sync::Arc<Origin>,
    num: &str,
    entry: o::Asset,
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
        .into_iter()
        .map(|product| ProductRecord {
            id: state.next_id(),
            origin: origin.clone(),
            product,
            merchandise: None,
        })
        .collect();
    let packages: Vec<_> = entry
        .merchandises
        .into_iter()
        .map(|m| package(state, origin, m, None))
        .collect();
    let asset = state
        .assets
        .get_mut(num)
        .expect("the asset exists: created above");
    asset.orders.insert(origin.order.clone());
    for extension in entry.asset_extend_list {
        match asset
            .extends
            .iter_mut()
            .find(|e| e.extend_code == extension.extend_code)
        {
            Some(existing) => existing.extend_value = extension.extend_value,
            None => asset.extends.push(extension),
        }
    }
    asset.limit_start = entry.limit_start_date.or(asset.limit_start);
    asset.limit_end = entry.limit_end_date.or(asset.limit_end);
    if entry.borrowed_usb_key == Some(true) {
        asset.lent_lock = true;
    }
    append(&mut asset.products, products);
    append(&mut asset.merchandises, packages);
    asset.updated = origin.created;
}

/// Appends without the spare capacity `extend` leaves: a first order's list is moved in
/// whole. `extend` onto an empty `Vec` reserves room for four, and a 50,000-asset seed
/// held 70 MB of such room for products it never got (a heap profile of one).
fn append<T>(to: &mut Vec<T>, mut more: Vec<T>) {
    if to.is_empty() {
        more.shrink_to_fit();
        *to = more;
    } else {
        to.reserve_exact(more.len());
        to.extend(more);
    }
}

pub(super) fn package(
    state: &mut State,
    origin: &std::sync::Arc<Origin>,
    m: o::Merchandise,
    parent: Option<i64>,
) -> MerchandiseRecord {
    let id = state.next_id();
    let products = m
        .license_order_product_list
        .into_iter()
        .map(|product| ProductRecord {
            id: state.next_id(),
            origin: origin.clone(),
            product,
            merchandise: Some(m.crm_product_id.clone()),
        })
        .collect();
    let children = m
        .children
        .into_iter()
        .flatten()
        .map(|c| package(state, origin, c, Some(id)))
        .collect();
    MerchandiseRecord {
        id,
        parent,
        origin: origin.clone(),
        num: m.merchandise_num,
        name: m.merchandise_name,
        parent_num: m.parent_merchandise_num,
        time_expression: m.time_duration_expression,
        products,
        children,
    }
}

#[cfg(test)]
mod tests {
    use super::append;

    #[test]
    fn appending_leaves_no_spare_room() {
        let mut list: Vec<u32> = Vec::new();
        let mut first = Vec::with_capacity(8);
        first.push(1);
        append(&mut list, first);
        assert_eq!((list.len(), list.capacity()), (1, 1), "moved in, trimmed");
        append(&mut list, vec![2, 3]);
        assert_eq!(list, [1, 2, 3]);
        assert_eq!(list.capacity(), 3, "grown by exactly what came");
    }
}
