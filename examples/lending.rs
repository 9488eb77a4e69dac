//! Lending: assign a lock to an employee (`configure_member_assets`), lend its rights into
//! a lent lock (`lend_assets`), see the loan in the lent-lock list, and the typed error a
//! second employee gets for the same lent lock.
//!
//! Runs against the in-process simulator with its `demo` seed (Acme Robotics: alice
//! holds one lock, bob another, carol none, and there is one lent lock):
//!
//! ```sh
//! cargo run --example lending
//! ```

use std::error::Error as StdError;

use futures_util::TryStreamExt as _;
use licensing_sdk::{member::errors::LendAssetsErrorCode as Code, member::types as mt};

mod demo;

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    // The simulator with its `demo` seed and a client of each service: `demo/mod.rs`.
    let (simulator, orders, members) = demo::start().await?;

    // The enterprise main account of the channel customer CH01/CC-ACME.
    let eg = demo::acme(&orders).await?.enterprise_global_id;

    // The employees, by account; each list item carries the asset numbers it holds.
    let everyone: Vec<mt::MemberListItem> = members
        .list_members()
        .enterprise_global_id(&eg)
        .page_size(100u32)
        .stream()
        .try_collect()
        .await?;
    let employee = |user: &str| {
        let account = format!("{user}@acmerobotics");
        everyone
            .iter()
            .find(|m| m.user_name == account)
            .ok_or(format!("no {account}"))
    };
    let (alice, bob, carol) = (employee("alice")?, employee("bob")?, employee("carol")?);
    let bobs_lock = bob.asset_nums.first().ok_or("bob holds a lock")?.clone();
    let lent_lock = members.list_lent_locks().enterprise_global_id(&eg).await?;
    let lent_lock = lent_lock.first().ok_or("no lent lock")?.asset_num.clone();

    // 1. Give bob's lock to carol: `add_assets` takes it from its previous holder.
    members
        .configure_member_assets()
        .member_global_id(&carol.global_id) // or the account, "carol"
        .body(
            mt::ConfigureAssetsRequest::builder()
                .add_assets(vec![bobs_lock.clone()])
                .delete_assets(Vec::<String>::new()),
        )
        .await?;
    let assets = members.list_asset_nums().enterprise_global_id(&eg).await?;
    let asset = |num: &str| {
        assets
            .iter()
            .find(|a| a.asset_num == num)
            .ok_or(format!("no {num}"))
    };
    let lock = asset(&bobs_lock)?;
    assert_eq!(
        lock.cloud_account_global_id.as_deref(),
        Some(carol.global_id.as_str())
    );
    println!(
        "lock {bobs_lock} (asset {}) assigned to carol",
        lock.asset_id
    );

    // 2. Carol lends the lock's rights into the lent lock. Assets are named by asset id.
    let lend = |who: &mt::MemberListItem, asset_id: &str| {
        members.lend_assets().member_global_id(&who.global_id).body(
            mt::LendAssetsRequest::builder()
                .borrowed_usb_key(lent_lock.clone())
                .asset_ids(vec![asset_id.to_string()]),
        )
    };
    lend(carol, &lock.asset_id).await?;

    for l in members.list_lent_locks().enterprise_global_id(&eg).await? {
        let to = l.cloud_account_global_id.as_deref().unwrap_or("nobody");
        println!(
            "lent lock {} lent: {} (to {to})",
            l.asset_num, l.borrowed_flag
        );
        assert!(
            l.borrowed_flag && to == carol.global_id,
            "the loan is carol's"
        );
    }
    // The rights moved: the lent lock lists its own products and the lent ones.
    let lent_id = &asset(&lent_lock)?.asset_id;
    let products = members.list_asset_products().asset_id(lent_id).await?;
    let uris: Vec<&str> = products
        .product_instance_list
        .iter()
        .map(|p| p.product_uri.as_str())
        .collect();
    println!("lent lock {lent_lock} now carries {uris:?}");
    assert!(
        uris.contains(&"cad"),
        "the lent CAD rights are on the lent lock"
    );

    // 3. Alice tries to lend her own lock into the same lent lock: it is carol's now.
    let alices_lock = asset(alice.asset_nums.first().ok_or("alice holds a lock")?)?;
    match lend(alice, &alices_lock.asset_id).await {
        Err(e) => match Code::of(&e) {
            Some(Code::LentLockLentToAnotherEmployee) => println!("alice cannot borrow: {e}"),
            Some(Code::LentLockStateAbnormal) => return Err("the lent lock is disabled".into()),
            Some(Code::EmployeeLacksPermission) => return Err("alice does not hold it".into()),
            _ => return Err(format!("unexpected: {e}").into()),
        },
        Ok(()) => return Err("alice borrowed a lent lock lent to carol".into()),
    }

    simulator.shutdown().await?;
    println!("lending ok");
    Ok(())
}
