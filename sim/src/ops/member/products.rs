//! `listAssetProducts`: the products and packages under an asset.

use super::*;

/// The products outside packages and the package tree of an asset.
pub(crate) fn list_asset_products(sim: &Db, call: &Call) -> Result<m::AssetProducts, Failure> {
    let id = call.path("assetId");
    let state = sim.state();
    let Some(asset) = state
        .asset_ids
        .get(id)
        .and_then(|num| state.assets.get(num))
    else {
        return Err(fail(
            E::AssetNumberNotFound,
            format!("no asset with id {id:?}"),
        ));
    };
    // Lending moves the rights (the member-center state table): a source asset whose
    // rights are lent lists none of them; the lent lock lists its own and the lent ones.
    let mut sources: Vec<&Asset> = Vec::new();
    if asset.lent_into.is_none() {
        sources.push(asset);
    }
    if let Some(loan) = state.loans.get(&asset.num) {
        sources.extend(
            loan.assets
                .iter()
                .filter_map(|id| state.asset_ids.get(id))
                .filter_map(|num| state.assets.get(num)),
        );
    }
    Ok(m::AssetProducts {
        product_instance_list: sources
            .iter()
            .flat_map(|a| a.products.iter().map(|p| product_instance(a, p)))
            .collect(),
        children: sources
            .iter()
            .flat_map(|a| a.merchandises.iter().map(|p| package_node(a, p)))
            .collect(),
    })
}

pub(super) fn product_instance(asset: &Asset, p: &ProductRecord) -> m::ProductInstance {
    let product = &p.product;
    let extended = !product.product_features.is_empty();
    m::ProductInstance {
        id: m::ProductInstanceId::Int64(p.id),
        license_type: p.origin.license_type.clone(),
        customer_id: p.origin.customer.clone(),
        asset_id: Some(asset.id.clone()),
        asset_ins_id: Some(product.parent_crm_product_id.clone()),
        merchandise_ins_id: p.merchandise.clone(),
        asset_num: Some(asset.num.clone()),
        product_uri: product.product_uri.clone(),
        gms_pid: product.gms_pid.clone().unwrap_or_default(),
        app_key: product.app_key.clone().unwrap_or_default(),
        product_name: product.product_name.clone(),
        channel_code: p.origin.channel_code.clone(),
        license_order_id: p.origin.order.clone(),
        channel_order_id: p.origin.channel_order_id.clone(),
        // Absent dates are reported as 0 (the fields are not nullable).
        limit_start_time: product.limit_start_date.unwrap_or(0),
        limit_end_time: product.limit_end_date.unwrap_or(0),
        limit_amount: 0,
        limit_concurrent: product.limit_concurrent,
        limit_time_duration: product.limit_time_duration,
        trial: product.trial,
        trial_end_date: Some(product.trial_end_date),
        limit_type: if extended {
            LimitType::Feature
        } else {
            LimitType::Basic
        },
        prod_def_extend: extended,
        time_duration_expression: Some(product.time_duration_expression.clone()),
        src_license_order_id: product
            .src_license_order_id
            .clone()
            .or_else(|| p.origin.src_order.clone()),
        create_time: p.origin.created,
        update_time: None,
        activate_flag: true,
        crm_product_id: product.crm_product_id.clone(),
        product_extend_instance_list: Vec::new(),
    }
}

pub(super) fn package_node(asset: &Asset, p: &MerchandiseRecord) -> m::MerchandiseNode {
    m::MerchandiseNode {
        id: m::ProductInstanceId::Int64(p.id),
        license_type: p.origin.license_type.clone(),
        merchandise_num: p.num.clone(),
        merchandise_name: p.name.clone(),
        parent_id: Some(p.parent.map_or(Value::Null, Value::from)),
        parent_merchandise_num: p.parent_num.clone(),
        customer_id: p.origin.customer.clone(),
        license_order_id: p.origin.order.clone(),
        channel_order_id: p.origin.channel_order_id.clone(),
        create_time: p.origin.created,
        update_time: None,
        channel_code: p.origin.channel_code.clone(),
        time_duration_expression: Some(p.time_expression.clone()),
        src_license_order_id: p.origin.src_order.clone(),
        children: Some(p.children.iter().map(|c| package_node(asset, c)).collect()),
        product_instance_list: Some(
            p.products
                .iter()
                .map(|product| product_instance(asset, product))
                .collect(),
        ),
    }
}
