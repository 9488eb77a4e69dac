//! A tour of the SDK against the embedded simulator, started with its built-in `demo`
//! seed (one enterprise, Acme Robotics, with the channel customer `CH01`/`CC-ACME`, locks
//! and employees): finding the customer an order needs, asset numbers, batch orders, locks,
//! employees, asset assignment, lending, and a typed business error.
//!
//! ```sh
//! cargo run -p licensing-quickstart
//! ```

use std::{error::Error as StdError, num::NonZeroU32};

use futures_util::TryStreamExt as _;
use licensing_sdk::{
    CustomerType, DefaultCustomer, Error, ErrorCode, LicenseType, SyncMode, Trial, member,
    member::types as mt, order, order::types as ot,
};
use licensing_sim as sim;

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    let demo = sim::admin::builtin_seed("demo").expect("the demo seed is built in");
    let simulator = sim::Simulator::builder().seed(demo).start().await?;
    let url = simulator.url();
    println!("simulator listening on {url}\n");

    let orders = order::Client::builder(&url)
        .application_token(sim::DEFAULT_APP_TOKEN)
        .build()?;
    let members = member::Client::builder(&url)
        .client_token(sim::DEFAULT_CLIENT_TOKEN)
        .user_token(sim::DEFAULT_USER_TOKEN)
        .build()?;

    let customer = find_customer(&orders).await?;
    let eg = customer.enterprise_global_id.clone();
    let [lent_lock, lock] = buy_assets(&orders, &customer).await?;
    list_cloud_licenses(&orders, &eg).await?;
    disable_and_enable(&orders, &lock).await?;
    let [dave, erin] = add_employees(&members, &eg).await?;
    list_employees(&members, &eg).await?;
    let lock_id = assign_and_lend(&members, &eg, &dave, &lock, &lent_lock).await?;
    lend_again(&members, &erin, &lent_lock, &lock_id).await?;

    simulator.shutdown().await?;
    println!("\ndone");
    Ok(())
}

/// 1. The customer an order is for: a channel customer bound to an enterprise main
///    account (`bind_enterprise`), found here with `query_enterprise`. Its `customerId`
///    and `enterpriseGlobalId` are what a batch order names.
async fn find_customer(
    orders: &order::Client,
) -> Result<ot::EnterpriseCustomer, Box<dyn StdError>> {
    let customers = orders
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("CC-ACME")
        .default_customer(DefaultCustomer::All)
        .await?;
    let customer = customers
        .into_iter()
        .find(|c| c.channel_customer_id == "CC-ACME")
        .expect("the demo seed binds CC-ACME");
    println!(
        "channel customer CC-ACME is {} in enterprise {} ({})",
        customer.customer_id, customer.enterprise_global_id, customer.enterprise_name
    );
    Ok(customer)
}

/// 2. Asset numbers, then a new purchase: a lent lock, a refillable lock with a CAD
///    product, and (in a second order, which needs the first as its source) a cloud
///    license flagged `gxxp`. Returns the lent lock's and the refillable lock's numbers.
async fn buy_assets(
    orders: &order::Client,
    customer: &ot::EnterpriseCustomer,
) -> Result<[String; 2], Box<dyn StdError>> {
    let numbers: Vec<String> = orders
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(NonZeroU32::new(3).unwrap()))
        .await?
        .into_iter()
        .map(String::from)
        .collect();
    println!("allocated asset numbers {numbers:?}");
    let [lent_lock, lock, cloud] = <[String; 3]>::try_from(numbers).expect("three numbers");

    let locks = license_order(
        customer,
        LicenseType::NormalRecoverUsbkey,
        None,
        vec![
            asset(&lent_lock, "LEND", 1)?.borrowed_usb_key(Some(true)),
            asset(&lock, "CAD", 5)?,
        ],
    )?;
    let first = batch(orders, "CO-2026-0001", locks).await?;
    let cloud_order = license_order(
        customer,
        LicenseType::CloudCustomer,
        Some(first),
        vec![
            asset(&cloud, "CLOUD", 10)?.asset_extend_list(vec![ot::AssetExtension {
                extend_code: Some("gxxp".into()),
                extend_value: Some("true".into()),
            }]),
        ],
    )?;
    // A batch of its own, with its own channel order number: one number, one submission.
    batch(orders, "CO-2026-0002", cloud_order).await?;
    Ok([lent_lock, lock])
}

/// The enterprise's cloud licenses flagged `gxxp`: the one just bought.
async fn list_cloud_licenses(orders: &order::Client, eg: &str) -> Result<(), Box<dyn StdError>> {
    let virtual_assets = orders
        .list_virtual_assets()
        .enterprise_global_id(eg)
        .extend_code("gxxp")
        .await?;
    for asset in &virtual_assets {
        println!(
            "virtual asset {} ({}) locked: {}",
            asset.asset_num, asset.license_type, asset.locked
        );
    }
    Ok(())
}

/// 3. Disable and enable the refillable lock (lock "9999999999" does not exist).
async fn disable_and_enable(orders: &order::Client, lock: &str) -> Result<(), Box<dyn StdError>> {
    for disable in [true, false] {
        let request = ot::LockRequest::builder()
            .asset_nums(vec![lock.to_string(), "9999999999".to_string()])
            .operator_identity("ops@example.com");
        let results = if disable {
            orders.disable_locks().body(request).await?
        } else {
            orders.enable_locks().body(request).await?
        };
        let verb = if disable { "disable" } else { "enable" };
        for r in results {
            println!("{verb} {}: {:?}", r.asset_num, r.status);
        }
    }
    Ok(())
}

/// 4. Employees: gina's password is shorter than the simulator accepts (6..=32), which
///    the SDK cannot know, so the platform adds the others and reports her (60027).
///    Returns dave's and erin's global ids.
async fn add_employees(
    members: &member::Client,
    eg: &str,
) -> Result<[String; 2], Box<dyn StdError>> {
    let people = [
        ("dave", "Dave"),
        ("erin", "Erin"),
        ("frank", "Frank"),
        ("gina", "Gina"),
    ];
    let user_list = people
        .iter()
        .map(|(user, name)| {
            let password = if *user == "gina" {
                "abc"
            } else {
                "Initial-Pass-1"
            };
            mt::NewMember::builder()
                .user_name(*user)
                .password(password)
                .name(*name)
                .try_into()
        })
        .collect::<Result<Vec<mt::NewMember>, _>>()?;
    let added = members
        .add_members()
        .enterprise_global_id(eg)
        .body(mt::AddMembersRequest::builder().user_list(user_list))
        .await;
    let added = match added {
        Ok(result) => result,
        Err(Error::PartialFailure { error, result }) => {
            println!("partly added ({}): {}", error.code, error.message);
            for failed in &result.failed {
                println!("  not added: {} ({})", failed.user_name, failed.message);
            }
            *result
        }
        Err(other) => return Err(other.into()),
    };
    for member in &added.succeeded {
        println!("  added {} as {}", member.user_name, member.global_id);
    }
    let dave = added.succeeded[0].global_id.clone();
    let erin = added.succeeded[1].global_id.clone();
    Ok([dave, erin])
}

/// Every page, fetched as the stream is consumed (two per page here).
async fn list_employees(members: &member::Client, eg: &str) -> Result<(), Box<dyn StdError>> {
    let everyone: Vec<mt::MemberListItem> = members
        .list_members()
        .enterprise_global_id(eg)
        .page_size(2u32)
        .stream()
        .try_collect()
        .await?;
    let names: Vec<&str> = everyone.iter().map(|m| m.user_name.as_str()).collect();
    println!("{} employees: {}", everyone.len(), names.join(", "));
    Ok(())
}

/// 5. Assign the CAD lock to dave and lend its rights into the lent lock. Returns the CAD
///    lock's asset id.
async fn assign_and_lend(
    members: &member::Client,
    eg: &str,
    dave: &str,
    lock: &str,
    lent_lock: &str,
) -> Result<String, Box<dyn StdError>> {
    members
        .configure_member_assets()
        .member_global_id(dave)
        .body(
            mt::ConfigureAssetsRequest::builder()
                .delete_assets(Vec::<String>::new())
                .add_assets(vec![lock.to_string()]),
        )
        .await?;
    let lock_id = members
        .list_asset_nums()
        .enterprise_global_id(eg)
        .await?
        .into_iter()
        .find(|a| a.asset_num == lock)
        .map(|a| a.asset_id)
        .expect("the lock is listed");
    lend(members, dave, lent_lock, &lock_id).await?;
    for l in members.list_lent_locks().enterprise_global_id(eg).await? {
        println!(
            "lent lock {} lent: {} to {}",
            l.asset_num,
            l.borrowed_flag,
            l.cloud_account_global_id.as_deref().unwrap_or("nobody")
        );
    }
    Ok(lock_id)
}

/// 6. A typed business error: the lent lock is already lent to dave.
async fn lend_again(
    members: &member::Client,
    erin: &str,
    lent_lock: &str,
    lock_id: &str,
) -> Result<(), Box<dyn StdError>> {
    match lend(members, erin, lent_lock, lock_id).await {
        Err(Error::Api(e)) if e.code == ErrorCode::LentLockLentToAnotherEmployee => {
            println!("erin cannot borrow: {e}");
            Ok(())
        }
        other => Err(format!("expected error 33018, got {other:?}").into()),
    }
}

/// Lends the rights of asset `asset_id` into `lent_lock`, for `member` to borrow.
fn lend<'a>(
    members: &'a member::Client,
    member: &str,
    lent_lock: &str,
    asset_id: &str,
) -> member::builder::LendAssets<'a> {
    members.lend_assets().member_global_id(member).body(
        mt::LendAssetsRequest::builder()
            .borrowed_usb_key(lent_lock.to_string())
            .asset_ids(vec![asset_id.to_string()]),
    )
}

/// An asset entry: asset number `num` with one product `uri` of `nodes` concurrent nodes.
fn asset(num: &str, uri: &str, nodes: i32) -> Result<ot::builder::Asset, Box<dyn StdError>> {
    let product: ot::Product = ot::Product::builder()
        .crm_product_id(format!("P-{uri}"))
        .parent_crm_product_id(format!("A-{num}"))
        .product_uri(uri)
        .product_name(format!("{uri} license"))
        .product_type("software")
        .limit_concurrent(nodes)
        .limit_time_duration(0)
        .trial(Trial::NotTrial)
        .trial_end_date(0)
        .time_unit("year")
        .time_unit_quantity(1)
        .time_duration_expression("1-0-0")
        .product_features(Vec::<ot::ProductFeature>::new())
        .try_into()?;
    Ok(ot::Asset::builder()
        .asset_nos(vec![num.to_string()])
        .products(vec![product]))
}

/// A `new_buy` order for the customer.
fn license_order(
    customer: &ot::EnterpriseCustomer,
    license_type: LicenseType,
    source: Option<String>,
    assets: Vec<ot::builder::Asset>,
) -> Result<ot::LicenseOrder, Box<dyn StdError>> {
    let assets = assets
        .into_iter()
        .map(ot::Asset::try_from)
        .collect::<Result<Vec<_>, _>>()?;
    let order: ot::NewBuyOrder = ot::NewBuyOrder::builder()
        .sequence(1)
        .customer_id(customer.customer_id.clone())
        .crm_customer_id("CRM-ACME")
        .customer_name("Acme Robotics")
        .channel_customer_id(customer.channel_customer_id.clone())
        .admin_name("Ada Admin")
        .admin_account("ada")
        .admin_email("ada@example.com")
        .admin_cell_number("13800000000")
        .password_mobile("13800000000")
        .address("1 Main Street")
        .customer_type(CustomerType::Company)
        .branch_code("BR01")
        .branch_name("North")
        .enterprise_global_id(customer.enterprise_global_id.clone())
        .license_type(license_type)
        .src_license_order_id(source)
        .assets(assets)
        .try_into()?;
    Ok(ot::LicenseOrder::NewBuy(order))
}

/// Sends one order as a batch under the channel's order number; returns its license order
/// id.
async fn batch(
    orders: &order::Client,
    channel_order_id: &str,
    order: ot::LicenseOrder,
) -> Result<String, Error> {
    let license_type = order.license_type().clone();
    let results = orders
        .batch_order()
        .app_key("quickstart")
        .body(
            ot::BatchOrderRequest::builder()
                .channel_code("CH01")
                .channel_order_id(channel_order_id)
                .sync_mode(SyncMode::Sync)
                .order_list(vec![order]),
        )
        .await?;
    let id = results[0].license_order_id.clone();
    println!("ordered {license_type} assets: license order {id}");
    Ok(id)
}
