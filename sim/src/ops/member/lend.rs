//! `lendAssets`: lending assets to a lent lock.

use super::*;

/// Moves the rights of the employee's assets into a lent lock.
///
/// Checked in this order: body (`40000`), employee by global id (`60026`), the lent lock
/// exists, was bought as a lent lock and is enabled (`33008`), it belongs to the
/// employee's enterprise (`33009`), it is not lent to another employee (`33018`), each
/// asset is assigned to the employee (`33003`), is not lent into another lock (`33007`)
/// and carries a product with at least one node (`33006`), and the employee borrows with
/// no other lent lock (`33009`).
pub(crate) fn lend_assets(sim: &Db, call: &Call) -> Result<(), Failure> {
    let req: m::LendAssetsRequest = call.body().map_err(empty)?;
    let lock_num = check_lend_request(&req)?;
    let member_id = call.path("memberGlobalId");
    let mut guard = sim.state_mut();
    let state = &mut *guard;
    check_lent_lock(state, member_id, lock_num)?;
    for id in &req.asset_ids {
        check_lendable(state, member_id, lock_num, id)?;
    }
    // One lent lock per employee: `borrowNum` holds one number.
    if let Some(other) = state.members[member_id]
        .borrow
        .as_deref()
        .filter(|b| *b != lock_num)
    {
        return Err(fail(
            E::LendRequestFailed,
            format!("employee {member_id} already borrows with lent lock {other}"),
        ));
    }
    record_loan(state, member_id, lock_num, &req.asset_ids);
    Ok(())
}

/// The request's own shape, before any state is read: the member center answers its
/// generic `40000` for it, as for a body it cannot read. Returns the lent lock number.
pub(super) fn check_lend_request(req: &m::LendAssetsRequest) -> Result<&str, Failure> {
    let lock_num = req.borrowed_usb_key.trim();
    if lock_num.is_empty() {
        return Err(empty("borrowedUsbKey must not be empty"));
    }
    if req.asset_ids.is_empty() || req.asset_ids.len() > MAX_ASSETS_PER_CALL {
        return Err(empty(format!(
            "assetIDs must have 1 to {MAX_ASSETS_PER_CALL} asset ids (has {})",
            req.asset_ids.len()
        )));
    }
    if req.asset_ids.iter().any(|id| id.trim().is_empty()) {
        return Err(empty("assetIDs must not contain empty ids"));
    }
    Ok(lock_num)
}

/// The employee and the lent lock. The document requires "an available lent lock": here
/// one bought as a lent lock and enabled, of the employee's own enterprise, and not lent
/// to another employee, since a loan belongs to one employee.
pub(super) fn check_lent_lock(
    state: &State,
    member_id: &str,
    lock_num: &str,
) -> Result<(), Failure> {
    let Some(member) = state.members.get(member_id) else {
        return Err(fail(
            E::NoEmployeeMatched,
            format!("no employee {member_id:?}"),
        ));
    };
    let Some(lock) = state
        .assets
        .get(lock_num)
        .filter(|a| a.lent_lock && !a.locked)
    else {
        return Err(fail(
            E::LentLockStateAbnormal,
            format!("{lock_num:?} is not an enabled lent lock"),
        ));
    };
    if lock.enterprise != member.enterprise {
        return Err(fail(
            E::LendRequestFailed,
            format!("lent lock {lock_num} belongs to another enterprise"),
        ));
    }
    if let Some(loan) = state.loans.get(lock_num).filter(|l| l.member != member_id) {
        return Err(fail(
            E::LentLockLentToAnotherEmployee,
            format!("lent lock {lock_num} is lent to employee {}", loan.member),
        ));
    }
    Ok(())
}

/// One asset to lend. The document requires "rights held by the employee" (the asset
/// is assigned to them) and "enough nodes" (a product with a concurrent node to move);
/// an asset's rights sit in one lent lock at a time, and never in the lock itself.
pub(super) fn check_lendable(
    state: &State,
    member_id: &str,
    lock_num: &str,
    id: &str,
) -> Result<(), Failure> {
    let Some(asset) = state
        .asset_ids
        .get(id)
        .and_then(|num| state.assets.get(num))
        .filter(|a| a.holder.as_deref() == Some(member_id))
    else {
        return Err(fail(
            E::EmployeeLacksPermission,
            format!("employee {member_id} holds no asset {id:?}"),
        ));
    };
    if asset.num == lock_num {
        return Err(fail(
            E::LendRequestFailed,
            "a lent lock cannot be lent into itself",
        ));
    }
    if let Some(other) = asset.lent_into.as_deref().filter(|l| *l != lock_num) {
        return Err(fail(
            E::AlreadyLent,
            format!("asset {id} is already lent to lent lock {other}"),
        ));
    }
    if !asset.all_products().any(|p| p.product.limit_concurrent > 0) {
        return Err(fail(
            E::InsufficientNodes,
            format!("asset {id} has no product with a free node"),
        ));
    }
    Ok(())
}

/// Records the loan on the lent lock, the assets and the employee; a repeat with the
/// same lock adds to the loan it already has.
pub(super) fn record_loan(
    state: &mut State,
    member_id: &str,
    lock_num: &str,
    asset_ids: &[String],
) {
    let loan = state
        .loans
        .entry(lock_num.to_string())
        .or_insert_with(|| Loan {
            member: member_id.to_string(),
            assets: BTreeSet::new(),
        });
    for id in asset_ids {
        loan.assets.insert(id.clone());
        if let Some(asset) = state
            .asset_ids
            .get(id)
            .and_then(|n| state.assets.get_mut(n))
        {
            asset.lent_into = Some(lock_num.to_string());
        }
    }
    if let Some(member) = state.members.get_mut(member_id) {
        member.borrow = Some(lock_num.to_string());
    }
}
