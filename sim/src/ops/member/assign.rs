//! `configureMemberAssets`: assigning assets to employees.

use super::*;

/// The employee a configure call names: by global id or, failing that, by account
/// (`alice`, or `alice@code` with the enterprise code). No match answers `60026`, a bare
/// account found in several enterprises `60023`.
pub(super) fn resolve_member(state: &State, key: &str) -> Result<String, Failure> {
    if state.members.contains_key(key) {
        return Ok(key.to_string());
    }
    let (account, code) = match key.split_once('@') {
        Some((account, code)) => (account, Some(code)),
        None => (key, None),
    };
    let mut found = state.members_with_account(account).filter(|m| {
        code.is_none_or(|code| {
            state
                .enterprises
                .get(&m.enterprise)
                .is_some_and(|e| e.code.eq_ignore_ascii_case(code))
        })
    });
    match (found.next(), found.next()) {
        (None, _) => Err(fail(
            E::NoEmployeeMatched,
            format!("no employee matches {key:?}"),
        )),
        (Some(member), None) => Ok(member.global_id.clone()),
        (Some(_), Some(_)) => Err(fail(
            E::MultipleEmployeesMatched,
            format!(
                "account {key:?} matches employees of several enterprises; name the enterprise code or use the global id"
            ),
        )),
    }
}

/// Revokes `deleteAssets` from the employee and assigns `addAssets` to it (taking them
/// from whoever held them). All numbers are checked before anything changes.
///
/// Its document row gives no parameter code (no `40000`): a body that cannot be read as
/// the two lists of asset numbers, or that names more than the simulator looks up, answers
/// "asset number not found" (`60024`), the row's code about the asset numbers the request
/// carries, with a message saying what is wrong.
pub(crate) fn configure_member_assets(sim: &Db, call: &Call) -> Result<(), Failure> {
    let unreadable = |cause: String| {
        Failure::with_message(
            E::AssetNumberNotFound,
            format!("asset numbers not found in the request: {cause}"),
            cause,
        )
    };
    let req: m::ConfigureAssetsRequest = call.body().map_err(unreadable)?;
    let named = req.delete_assets.len() + req.add_assets.len();
    if named > MAX_ASSETS_PER_CALL {
        return Err(unreadable(format!(
            "at most {MAX_ASSETS_PER_CALL} asset numbers are looked up per call (has {named})"
        )));
    }
    let mut guard = sim.state_mut();
    let state = &mut *guard;
    let member = resolve_member(state, call.path("memberGlobalId"))?;
    let enterprise = state.members[&member].enterprise.clone();
    let mut seen = BTreeSet::new();
    for num in req.delete_assets.iter().chain(&req.add_assets) {
        if !seen.insert(num.as_str()) {
            return Err(fail(
                E::AssetNumberConfiguredTwice,
                format!("asset number {num} appears more than once"),
            ));
        }
        let Some(asset) = state.assets.get(num) else {
            return Err(fail(
                E::AssetNumberNotFound,
                format!("no asset number {num:?}"),
            ));
        };
        if asset.enterprise != enterprise {
            return Err(fail(
                E::AssetNumberWrongCustomer,
                format!(
                    "asset {num} belongs to customer {}, which is not a customer of enterprise {enterprise}",
                    asset.customer
                ),
            ));
        }
    }
    let now = sim.clock.now_ms();
    for num in &req.delete_assets {
        if let Some(asset) = state
            .assets
            .get_mut(num)
            .filter(|a| a.holder.as_deref() == Some(member.as_str()))
        {
            asset.holder = None;
            asset.assigned = Some(now);
        }
        if let Some(record) = state.members.get_mut(&member) {
            record.assets.remove(num);
        }
    }
    for num in &req.add_assets {
        let Some(asset) = state.assets.get_mut(num) else {
            continue;
        };
        if let Some(previous) = asset.holder.replace(member.clone())
            && let Some(record) = state.members.get_mut(&previous)
        {
            record.assets.remove(num);
        }
        asset.assigned = Some(now);
        if let Some(record) = state.members.get_mut(&member) {
            record.assets.insert(num.clone());
        }
    }
    Ok(())
}
