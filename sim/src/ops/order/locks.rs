//! Physical locks: disable and enable.

use super::*;

/// Disables the named locks.
pub(crate) fn disable_locks(sim: &Db, call: &Call) -> Result<Vec<o::LockResultItem>, Failure> {
    set_locked(sim, call, true)
}

/// Enables the named locks.
pub(crate) fn enable_locks(sim: &Db, call: &Call) -> Result<Vec<o::LockResultItem>, Failure> {
    set_locked(sim, call, false)
}

/// Status per lock: 2 when no active asset has the number, 4 unless it is a refillable
/// or big-customer lock, 3 when it is a lent lock carrying lent rights (its state cannot
/// change while rights are lent into it), 1 otherwise (also when already in that state).
pub(super) fn set_locked(
    sim: &Db,
    call: &Call,
    locked: bool,
) -> Result<Vec<o::LockResultItem>, Failure> {
    let req: o::LockRequest = body(call)?;
    non_empty("operatorIdentity", &req.operator_identity)?;
    if req.asset_nums.is_empty() || req.asset_nums.len() > MAX_LOCKS {
        return Err(invalid(format!(
            "assetNums must have 1 to {MAX_LOCKS} lock numbers (has {})",
            req.asset_nums.len()
        )));
    }
    let mut guard = sim.state_mut();
    let state = &mut *guard;
    let now = sim.clock.now_ms();
    Ok(req
        .asset_nums
        .into_iter()
        .map(|num| {
            let status = match state.assets.get_mut(&num) {
                None => LockStatus::LockNotFound,
                Some(asset) if !asset.lock_state_changeable() => LockStatus::WrongLockType,
                Some(_) if state.loans.contains_key(&num) => LockStatus::OperationFailed,
                Some(asset) => {
                    asset.locked = locked;
                    asset.updated = now;
                    LockStatus::Success
                }
            };
            o::LockResultItem {
                asset_num: num,
                status,
            }
        })
        .collect())
}
