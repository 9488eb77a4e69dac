//! A month of orders for one channel customer: asset numbers, a batch of new purchases,
//! then the month-end batch with all three order types (`new_buy`, `delete_asset`,
//! `delete_product`), and what the customer holds afterwards.
//!
//! Runs against the in-process simulator with its `demo` seed (Acme Robotics, channel
//! customer `CH01`/`CC-ACME`):
//!
//! ```sh
//! cargo run --example month_end_batch
//! ```

use std::error::Error as StdError;

use licensing_sdk::{
    CustomerType, LicenseType, SyncMode, Trial, order,
    order::types::{self as ot, LicenseOrder},
};

mod demo;

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    // The simulator with its `demo` seed and a client of each service: `demo/mod.rs`.
    let (simulator, orders, members) = demo::start().await?;

    // The customer the orders are for, from the channel customer's ids.
    let customer = demo::acme(&orders).await?;
    let cid = customer.customer_id.as_str(); // what every order names
    let eg = customer.enterprise_global_id.as_str();

    // 1. Numbers for this month's three new locks (a new_buy may only use allocated ones).
    let numbers = orders
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(3u32))
        .await?;
    let [a, b, c] = <[ot::ShellNumber; 3]>::try_from(numbers).map_err(|_| "expected 3 numbers")?;
    println!("allocated {a}, {b}, {c}");

    // 2. Mid-month: two new purchases in one batch, all or nothing.
    let mid_month = vec![
        new_buy(1, cid, eg, &a, &[("CAD", 5), ("RENDER", 2)])?,
        new_buy(2, cid, eg, &b, &[("CAD", 5)])?,
    ];
    let bought = batch(&orders, "CO-2026-01-17", mid_month).await?;
    let order_of_a = bought.iter().find(|r| r.sequence == 1).ok_or("order #1")?;

    // 3. Month end: a third lock sold; lock `b` returned (revoke the whole asset); the
    //    RENDER product taken off lock `a`, scoped to the order that sold it. Products
    //    match by `productUri`; `strict_match_when_delete(true)` would also require equal
    //    dates and node count (omitted, it is false).
    let render = ot::RevokedProduct::builder()
        .crm_product_id(format!("P-{a}-RENDER"))
        .product_uri("RENDER")
        .limit_concurrent(2);
    let revoke_render: ot::RevokedProductAsset = ot::RevokedProductAsset::builder()
        .asset_nos(vec![a.to_string()])
        .products(vec![render])
        .try_into()?;
    let lt = LicenseType::NormalRecoverUsbkey;
    let month_end = vec![
        new_buy(1, cid, eg, &c, &[("VIEWER", 1)])?,
        LicenseOrder::delete_asset(2, cid, eg, lt.clone(), vec![b.to_string()]),
        LicenseOrder::delete_product(3, cid, eg, lt, vec![revoke_render])
            .with_src_license_order_id(&order_of_a.license_order_id),
    ];
    let results = batch(&orders, "CO-2026-01-31", month_end).await?;
    assert_eq!(results.len(), 3, "one result per order");

    // 4. What the enterprise holds now, as the member center lists it.
    let assets = members.list_asset_nums().enterprise_global_id(eg).await?;
    let held = |n: &ot::ShellNumber| assets.iter().find(|x| x.asset_num == n.as_str());
    assert!(held(&b).is_none(), "the returned lock {b} is gone");
    assert!(held(&c).is_some(), "the lock sold at month end is listed");
    let a_id = held(&a).ok_or("lock a is listed")?.asset_id.clone();
    let products = members.list_asset_products().asset_id(&a_id).await?;
    let uris: Vec<&str> = products
        .product_instance_list
        .iter()
        .map(|p| p.product_uri.as_str())
        .collect();
    println!("lock {a} now carries {uris:?}; lock {b} is revoked");
    assert_eq!(uris, ["CAD"], "RENDER was revoked from lock {a}");

    simulator.shutdown().await?;
    println!("month-end batch ok");
    Ok(())
}

/// Sends the orders as one synchronous batch; prints each order's license order id.
async fn batch(
    orders: &order::Client,
    channel_order_id: &str,
    order_list: Vec<LicenseOrder>,
) -> Result<Vec<ot::BatchOrderResultItem>, Box<dyn StdError>> {
    let sent: Vec<_> = order_list
        .iter()
        .map(|o| (o.sequence(), o.order_type()))
        .collect();
    let results = orders
        .batch_order()
        .app_key("month-end-example")
        .body(
            ot::BatchOrderRequest::builder()
                .channel_code("CH01")
                .channel_order_id(channel_order_id)
                .sync_mode(SyncMode::Sync)
                .order_list(order_list),
        )
        .await?;
    println!("batch {channel_order_id}:");
    for result in &results {
        // A result names its order by `sequence`.
        let (seq, order_type) = sent
            .iter()
            .find(|(seq, _)| *seq == result.sequence)
            .ok_or("a result for an order not sent")?;
        println!("  #{seq} {order_type}: {}", result.license_order_id);
    }
    Ok(results)
}

/// A `new_buy` of one refillable lock `num` with products `(uri, nodes)`, one year each.
fn new_buy(
    sequence: i32,
    customer_id: &str,
    eg: &str,
    num: &ot::ShellNumber,
    products: &[(&str, i32)],
) -> Result<LicenseOrder, Box<dyn StdError>> {
    let products: Vec<_> = products
        .iter()
        .map(|(uri, nodes)| {
            ot::Product::builder()
                .crm_product_id(format!("P-{num}-{uri}"))
                .parent_crm_product_id(format!("A-{num}"))
                .product_uri(*uri)
                .product_name(format!("{uri} license"))
                .product_type("software")
                .limit_concurrent(*nodes)
                .limit_time_duration(0)
                .trial(Trial::NotTrial)
                .trial_end_date(0)
                .time_unit("year")
                .time_unit_quantity(1)
                .time_duration_expression("1-0-0")
                .product_features(Vec::<ot::ProductFeature>::new())
        })
        .collect();
    let asset = ot::Asset::builder()
        .asset_nos(vec![num.to_string()])
        .products(products);
    let order: ot::NewBuyOrder = LicenseOrder::new_buy()
        .sequence(sequence)
        .customer_id(customer_id)
        .enterprise_global_id(eg)
        .license_type(LicenseType::NormalRecoverUsbkey)
        .crm_customer_id("CRM-ACME")
        .customer_name("Acme Robotics")
        .channel_customer_id("CC-ACME")
        .customer_type(CustomerType::Company)
        .admin_name("Ada Admin")
        .admin_account("ada")
        .admin_email("ada@example.com")
        .admin_cell_number("13800000000")
        .password_mobile("13800000000")
        .address("1 Main Street")
        .branch_code("BR01")
        .branch_name("North")
        .assets(vec![asset])
        .try_into()?; // checks every nested field; an error names it (assets[0].products[1]…)
    Ok(order.into())
}
