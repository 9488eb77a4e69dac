//! The member center: employees, the enterprise's asset numbers and lent locks, the
//! products under an asset, assigning assets to employees and lending.
//!
//! A body that is missing, not JSON or not the documented shape answers `40000`
//! ("parameter empty"), the member center's one generic code, on the operations whose
//! document row gives it; `configureMemberAssets`, whose row does not, answers `60024`.
//! The documented per-field codes are checked on the raw JSON first, so each rule answers
//! its own code where the operation's row gives it (`editMember` gives fewer than
//! `addMembers`). the protocol layer refuses any code the row does not give.

use std::{collections::BTreeSet, ops::RangeInclusive};

use serde_json::{Map, Value};

mod assign;
mod lend;
mod lists;
mod members;
mod products;

pub(crate) use assign::configure_member_assets;
pub(crate) use lend::lend_assets;
pub(crate) use lists::{list_asset_nums, list_lent_locks, list_members};
pub(crate) use members::{add_members, delete_member, edit_member, reset_member_password};
pub(crate) use products::list_asset_products;
#[allow(unused_imports)]
use {assign::*, lists::*, members::*};

use super::{Call, Db, Failure, Service, Settings};
use crate::state::{
    Asset, Loan, Member, MerchandiseRecord, NewMember, ProductRecord, State, rules,
};
use licensing_sdk::{ErrorCode as E, LimitType, member::types as m};

/// Employees per `addMembers` call.
pub(super) const MAX_MEMBERS_PER_CALL: usize = 100;
/// The largest `pageSize` (the document shows none).
pub(super) const MAX_PAGE_SIZE: i32 = 1000;
/// PageHelper's default number of navigation page numbers.
pub(super) const NAVIGATE_PAGES: i64 = 8;
/// Asset numbers or ids one configure or lend call may name.
pub(super) const MAX_ASSETS_PER_CALL: usize = 1000;

pub(super) fn empty(cause: impl Into<String>) -> Failure {
    Service::Member.invalid(cause)
}

pub(super) fn fail(code: E, cause: impl Into<String>) -> Failure {
    Failure::new(code, cause)
}

/// The employee fields of an `addMembers` item or an `editMember` body ([`rules`]).
pub(super) fn check_fields(
    fields: &Map<String, Value>,
    enterprise_code: &str,
) -> Result<(), Failure> {
    rules::member_fields(fields, enterprise_code).map_err(Failure::from)
}

/// A `password` field ([`rules`]).
pub(super) fn check_password(
    fields: &Map<String, Value>,
    accepted: &RangeInclusive<usize>,
) -> Result<(), Failure> {
    rules::password(fields, accepted).map_err(Failure::from)
}

pub(super) fn department_name(id: i64) -> String {
    format!("Department {id}")
}

pub(super) fn member_record(state: &State, member: &Member) -> m::Member {
    let enterprise = &state.enterprises[&member.enterprise];
    m::Member {
        id: member.id,
        user_id: member.user_id,
        global_id: member.global_id.clone(),
        enterprise_id: enterprise.id,
        department_id: member.department,
        department_name: member.department.map(department_name),
        user_name: member.user_name(&enterprise.code),
        name: member.name.clone(),
        remark: member.remark.clone(),
        deleted: false,
        update_time: member.updated,
        create_time: member.created,
    }
}
