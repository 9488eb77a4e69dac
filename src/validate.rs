//! Rules checked before a request is sent, beyond those the generated types check.
//!
//! typify's generated types already reject, while a request is built: patterns
//! (`userName` letters and digits), string lengths (`name` ≤ 30, `remark` ≤ 200, non-empty
//! required strings) and `minimum: 1` (`size`, `pageNum`, `pageSize` are `NonZeroU32`).
//! What they do not check lives here, in one place: array bounds (typify ignores
//! `minItems`/`maxItems`) and rules that span fields. Every request body implements
//! [`Validate`]; the generated `send()` calls it before building the request.

use crate::{LicenseType, ValidationError, member::types as m, order::types as o};

/// A request body's own rules.
pub trait Validate {
    /// `Ok` when the body may be sent; otherwise the first broken rule.
    fn validate(&self) -> Result<(), ValidationError>;
}

/// Bodies whose every documented rule the generated types check already.
macro_rules! checked_by_types {
    ($($t:ty),* $(,)?) => {$(
        impl Validate for $t {
            fn validate(&self) -> Result<(), ValidationError> {
                Ok(())
            }
        }
    )*};
}

checked_by_types!(
    o::BindEnterpriseRequest,
    o::CreateEnterpriseRequest,
    o::UpdateEnterpriseRequest,
    o::LockRequest,
    o::AllocateShellNumsRequest,
    m::EditMemberRequest,
    m::ResetPasswordRequest,
    m::ConfigureAssetsRequest,
    m::LendAssetsRequest,
);

/// Employees per `addMembers` call (the spec's `minItems`/`maxItems`; error `60013`).
pub const MEMBERS_PER_CALL: std::ops::RangeInclusive<usize> = 1..=100;

impl Validate for m::AddMembersRequest {
    fn validate(&self) -> Result<(), ValidationError> {
        let n = self.user_list.len();
        if !MEMBERS_PER_CALL.contains(&n) {
            let rule = format!(
                "must have {} to {} items (has {n})",
                MEMBERS_PER_CALL.start(),
                MEMBERS_PER_CALL.end()
            );
            return Err(ValidationError::new("userList", rule));
        }
        Ok(())
    }
}

impl Validate for o::BatchOrderRequest {
    /// The batch rules the order document states that the generated types do not check:
    /// non-empty lists (`minItems`) and cloud license types needing `srcLicenseOrderId`.
    fn validate(&self) -> Result<(), ValidationError> {
        for (i, order) in self.order_list.iter().enumerate() {
            let at = |field: &str| format!("orderList[{i}].{field}");
            let has_source = order
                .src_license_order_id()
                .is_some_and(|s| !s.trim().is_empty());
            if is_cloud_license(order.license_type()) && !has_source {
                return Err(ValidationError::new(
                    at("srcLicenseOrderId"),
                    format!(
                        "is required when licenseType is a cloud license ({})",
                        order.license_type()
                    ),
                ));
            }
            let entries = order.asset_entries();
            if entries.is_empty() {
                return Err(ValidationError::new(at("assets"), "must not be empty"));
            }
            for (j, entry) in entries.into_iter().enumerate() {
                if entry.asset_nos.is_empty() {
                    return Err(ValidationError::new(
                        at(&format!("assets[{j}].assetNos")),
                        "must not be empty",
                    ));
                }
                if entry.products == Some(0) {
                    return Err(ValidationError::new(
                        at(&format!("assets[{j}].products")),
                        format!(
                            "must not be empty unless orderType is delete_asset (is {})",
                            order.order_type()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Whether a license type is a cloud license, for which orders need `srcLicenseOrderId`.
pub fn is_cloud_license(license_type: &LicenseType) -> bool {
    license_type.as_str().starts_with("cloud_")
}
