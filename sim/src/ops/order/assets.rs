//! Virtual assets and asset-number allocation.

use super::*;

/// The enterprise's assets of cloud license types, optionally only those with an
/// extension attribute `extendCode`.
pub(crate) fn list_virtual_assets(sim: &Db, call: &Call) -> Result<Vec<o::VirtualAsset>, Failure> {
    let enterprise = call.path("enterpriseGlobalId");
    let extend_code = call.query("extendCode").filter(|c| !c.is_empty());
    let state = sim.state();
    let Some(ent) = state.enterprises.get(enterprise) else {
        return Err(invalid(format!("no enterprise {enterprise:?}")));
    };
    Ok(ent
        .assets
        .iter()
        .filter_map(|num| state.assets.get(num))
        .filter(|a| is_cloud_license(&a.license_type))
        .filter(|a| {
            extend_code.is_none_or(|code| {
                a.extends
                    .iter()
                    .any(|e| e.extend_code.as_deref() == Some(code))
            })
        })
        .map(virtual_asset)
        .collect())
}

pub(super) fn virtual_asset(a: &Asset) -> o::VirtualAsset {
    o::VirtualAsset {
        id: a.id.clone(),
        license_type: a.license_type.clone(),
        asset_num: a.num.clone(),
        grantable: !a.lent_lock,
        customer_id: a.customer.clone(),
        key_shell_number: a.shell_number().to_string(),
        key_chip_type: KeyChipType::FifthGeneration,
        locked: a.locked,
        freezing: false,
        create_time: a.created,
        update_time: a.updated,
        limit_start_time: a.limit_start,
        limit_end_time: a.limit_end,
        assign_status: o::AssignStatus {
            id: a.id.clone(),
            assign_status: if a.holder.is_some() {
                "assigned"
            } else {
                "unassigned"
            }
            .to_string(),
            assign_member_id: a.holder.clone().unwrap_or_default(),
            create_time: a.assigned.unwrap_or(a.created).to_string(),
            update_time: Some(serde_json::Value::Null),
        },
        asset_limits: None,
        asset_extends: a
            .extends
            .iter()
            .map(|e| o::AssetExtend {
                extend_code: e.extend_code.clone().unwrap_or_default(),
                extend_value: e.extend_value.clone().unwrap_or_default(),
            })
            .collect(),
        borrowed_usb_key: a.lent_lock,
    }
}

/// `size` new numbers of the current region.
pub(crate) fn allocate_shell_nums(sim: &Db, call: &Call) -> Result<Vec<o::ShellNumber>, Failure> {
    let req: o::AllocateShellNumsRequest = body(call)?;
    let size = req.size.get();
    if size > MAX_ALLOCATION {
        return Err(invalid(format!(
            "size must be at most {MAX_ALLOCATION} (is {size})"
        )));
    }
    let numbers = sim
        .allocator()
        .allocate(size)
        .ok_or_else(|| invalid("the asset numbers of this region are exhausted"))?;
    Ok(numbers.into_iter().map(o::ShellNumber).collect())
}
