//! Physical locks: disable and enable refillable locks, and read the status the order
//! service reports for each lock of a request — done, no such lock, or refused because a
//! lent lock carries lent rights. A disabled lent lock cannot be lent into.
//!
//! Runs against the in-process simulator with its `demo` seed (Acme Robotics: two
//! refillable locks, one held by alice, and a lent lock):
//!
//! ```sh
//! cargo run --example locks
//! ```

use std::error::Error as StdError;

use licensing_sdk::{
    LockStatus, member::errors::LendAssetsErrorCode as Code, member::types as mt,
    order::types as ot,
};

mod demo;

/// A lock number no asset has.
const MISSING: &str = "8999999999";

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    // The simulator with its `demo` seed and a client of each service: `demo/mod.rs`.
    let (simulator, orders, members) = demo::start().await?;

    // The enterprise (from the channel customer) and its locks, as the member center
    // lists them: the lent lock, a lock an employee holds, and every number.
    let eg = demo::acme(&orders).await?.enterprise_global_id;
    let assets = members.list_asset_nums().enterprise_global_id(&eg).await?;
    let lent_lock = members.list_lent_locks().enterprise_global_id(&eg).await?;
    let lent_lock = lent_lock.first().ok_or("no lent lock")?.asset_num.clone();
    let held = assets
        .iter()
        .find(|a| a.asset_num != lent_lock && a.cloud_account_global_id.is_some())
        .ok_or("no lock held by an employee")?;
    let holder = held.cloud_account_global_id.clone().unwrap_or_default();
    let mut numbers: Vec<String> = assets.iter().map(|a| a.asset_num.clone()).collect();
    numbers.push(MISSING.to_string());

    // An employee lending the rights of the lock they hold into the lent lock.
    let lend = || {
        members.lend_assets().member_global_id(&holder).body(
            mt::LendAssetsRequest::builder()
                .borrowed_usb_key(lent_lock.clone())
                .asset_ids(vec![held.asset_id.clone()]),
        )
    };

    // 1. Disable every lock, and one that does not exist: each number gets its status,
    //    and a missing lock does not fail the others.
    let disabled = orders.disable_locks().body(request(&numbers)).await?;
    report("disable", &disabled);
    assert_eq!(disabled.len(), numbers.len(), "a status for each number");
    for r in &disabled {
        let expected = match r.asset_num.as_str() {
            MISSING => LockStatus::LockNotFound,
            _ => LockStatus::Success,
        };
        assert_eq!(r.status, expected, "disable {}", r.asset_num);
    }

    // 2. A disabled lent lock cannot be lent into (33008).
    match lend().await {
        Err(e) if Code::of(&e) == Some(Code::LentLockStateAbnormal) => {
            println!("lending into disabled {lent_lock} refused: {e}");
        }
        other => return Err(format!("expected 33008, got {other:?}").into()),
    }

    // 3. Enable them again (enabling an enabled lock is `Success` too).
    let enabled = orders.enable_locks().body(request(&numbers)).await?;
    report("enable", &enabled);
    let ok = enabled
        .iter()
        .filter(|r| r.status == LockStatus::Success)
        .count();
    assert_eq!(ok, numbers.len() - 1, "all but the missing lock enabled");

    // 4. Once the lent lock carries lent rights, disabling it fails for that lock only.
    lend().await?;
    println!("lent the rights of {} into {lent_lock}", held.asset_num);
    let again = orders
        .disable_locks()
        .body(request(&[lent_lock.clone(), held.asset_num.clone()]))
        .await?;
    report("disable", &again);
    assert_eq!(
        status(&again, &lent_lock),
        Some(&LockStatus::OperationFailed)
    );
    assert_eq!(status(&again, &held.asset_num), Some(&LockStatus::Success));

    simulator.shutdown().await?;
    println!("locks ok");
    Ok(())
}

/// The body of `disable_locks` and `enable_locks`: up to 1000 numbers, and who acts.
fn request(numbers: &[String]) -> ot::builder::LockRequest {
    ot::LockRequest::builder()
        .asset_nums(numbers.to_vec())
        .operator_identity("ops@example.com")
}

/// The status reported for one lock.
fn status<'a>(results: &'a [ot::LockResultItem], num: &str) -> Option<&'a LockStatus> {
    results
        .iter()
        .find(|r| r.asset_num == num)
        .map(|r| &r.status)
}

/// Prints what happened to each lock, and what to do about it.
fn report(verb: &str, results: &[ot::LockResultItem]) {
    for r in results {
        let outcome = match &r.status {
            LockStatus::Success => "done".to_string(),
            LockStatus::LockNotFound => "no such lock: check the number".to_string(),
            LockStatus::OperationFailed => "failed: a lent lock carrying lent rights".to_string(),
            LockStatus::WrongLockType => "not a refillable or big-customer lock".to_string(),
            LockStatus::Unknown(code) => format!("status {code}, unknown to this SDK"),
        };
        println!("{verb} {}: {outcome}", r.asset_num);
    }
}
