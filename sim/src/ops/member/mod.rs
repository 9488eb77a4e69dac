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

use super::{Call, Db, Failure, Service};
use crate::state::{
    Asset, Loan, Member, MerchandiseRecord, NewMember, ProductRecord, State,
    rules::is_mobile_number,
};
use licensing_sdk::{ErrorCode as E, LimitType, member::types as m};

/// Employees per `addMembers` call.
pub(super) const MAX_MEMBERS_PER_CALL: usize = 100;
/// `userName` plus `@` and the enterprise code: fewer than 63 characters.
pub(super) const MAX_ACCOUNT_WITH_CODE: usize = 62;
pub(super) const MAX_NAME: usize = 30;
pub(super) const MAX_REMARK: usize = 200;
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

/// The employee fields of an `addMembers` item or an `editMember` body, with the codes
/// the add operation documents (the edit document says "same rules as endpoint 1").
/// A value of the wrong JSON type breaks the rule of its field; `null` for an optional
/// field is the field left out.
pub(super) fn check_fields(
    fields: &Map<String, Value>,
    enterprise_code: &str,
) -> Result<(), Failure> {
    match fields.get("userName") {
        None | Some(Value::Null) => return Err(fail(E::AccountEmpty, "userName is required")),
        Some(Value::String(s)) if s.is_empty() => {
            return Err(fail(E::AccountEmpty, "userName must not be empty"));
        }
        Some(Value::String(s)) if !s.bytes().all(|b| b.is_ascii_alphanumeric()) => {
            return Err(fail(
                E::AccountNotAlphanumeric,
                format!("userName {s:?} may contain only letters and digits"),
            ));
        }
        Some(Value::String(s)) => {
            let length = s.chars().count() + 1 + enterprise_code.chars().count();
            if length > MAX_ACCOUNT_WITH_CODE {
                return Err(fail(
                    E::NameTooLong,
                    format!(
                        "userName {s}@{enterprise_code} has {length} characters; it must have fewer than 63"
                    ),
                ));
            }
        }
        Some(_) => {
            return Err(fail(
                E::AccountNotAlphanumeric,
                "userName must be a string of letters and digits",
            ));
        }
    }
    match fields.get("name") {
        Some(Value::String(s)) if s.chars().count() > MAX_NAME => {
            return Err(fail(
                E::NameTooLong,
                format!(
                    "name has {} characters; at most {MAX_NAME} are allowed",
                    s.chars().count()
                ),
            ));
        }
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        _ => return Err(fail(E::NameEmpty, "name is required")),
    }
    match fields.get("remark") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.chars().count() <= MAX_REMARK => {}
        Some(Value::String(s)) => {
            return Err(fail(
                E::RemarkTooLong,
                format!(
                    "remark has {} characters; at most {MAX_REMARK} are allowed",
                    s.chars().count()
                ),
            ));
        }
        Some(_) => return Err(fail(E::RemarkTooLong, "remark must be a string")),
    }
    match fields.get("passwordMobile") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() || is_mobile_number(s) => {}
        Some(_) => {
            return Err(fail(
                E::InvalidMobileNumber,
                "passwordMobile must be an optional + and 6 to 15 digits",
            ));
        }
    }
    match fields.get("departmentId") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_i64().is_some_and(|d| d > 0) => {}
        Some(_) => {
            return Err(fail(
                E::GroupIdEmpty,
                "departmentId (the group id) must be a positive integer",
            ));
        }
    }
    Ok(())
}

/// A `password` field: present (`40001`) and of an accepted length (`50003`).
pub(super) fn check_password(
    fields: &Map<String, Value>,
    accepted: &RangeInclusive<usize>,
) -> Result<(), Failure> {
    let Some(Value::String(password)) = fields.get("password").filter(|p| p.as_str() != Some(""))
    else {
        return Err(fail(E::PasswordEmpty, "password is required"));
    };
    let length = password.chars().count();
    if !accepted.contains(&length) {
        return Err(Failure::with_message(
            E::PasswordLength,
            format!(
                "password length must lie between {} and {}",
                accepted.start(),
                accepted.end()
            ),
            format!("the password has {length} characters"),
        ));
    }
    Ok(())
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
