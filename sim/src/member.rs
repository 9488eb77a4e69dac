//! The member center: employees, the enterprise's asset numbers and lent locks, the
//! products under an asset, assigning assets to employees and lending.
//!
//! A body that is missing, not JSON or not the documented shape answers `40000`
//! ("parameter empty"), the member center's one generic code, on the operations whose
//! document row gives it; `configureMemberAssets`, whose row does not, answers `60024`.
//! The documented per-field codes are checked on the raw JSON first, so each rule answers
//! its own code where the operation's row gives it (`editMember` gives fewer than
//! `addMembers`). `http::respond` refuses any code the row does not give.

use std::{collections::BTreeSet, ops::RangeInclusive};

use serde_json::{Map, Value};

use super::{
    Shared,
    http::{Call, Failure, Service},
    state::{
        Asset, Loan, Member, MerchandiseRecord, NewMember, ProductRecord, State, is_mobile_number,
    },
};
use licensing_sdk::{ErrorCode as E, LimitType, member::types as m};

/// Employees per `addMembers` call.
const MAX_MEMBERS_PER_CALL: usize = 100;
/// `userName` plus `@` and the enterprise code: fewer than 63 characters.
const MAX_ACCOUNT_WITH_CODE: usize = 62;
const MAX_NAME: usize = 30;
const MAX_REMARK: usize = 200;
/// The largest `pageSize` (the document shows none).
const MAX_PAGE_SIZE: i32 = 1000;
/// PageHelper's default number of navigation page numbers.
const NAVIGATE_PAGES: i64 = 8;
/// Asset numbers or ids one configure or lend call may name.
const MAX_ASSETS_PER_CALL: usize = 1000;

fn empty(cause: impl Into<String>) -> Failure {
    Service::Member.invalid(cause)
}

fn fail(code: E, cause: impl Into<String>) -> Failure {
    Failure::new(code, cause)
}

/// The employee fields of an `addMembers` item or an `editMember` body, with the codes
/// the add operation documents (the edit document says "same rules as endpoint 1").
/// A value of the wrong JSON type breaks the rule of its field; `null` for an optional
/// field is the field left out.
fn check_fields(fields: &Map<String, Value>, enterprise_code: &str) -> Result<(), Failure> {
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
fn check_password(
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

fn department_name(id: i64) -> String {
    format!("Department {id}")
}

fn member_record(state: &State, member: &Member) -> m::Member {
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

/// Adds up to 100 employees. Each item is checked on its own; when every item fails the
/// reply is the first item's code, when only some fail it is `60027` with both lists.
pub(crate) fn add_members(sim: &Shared, call: &Call) -> Result<m::AddMembersResult, Failure> {
    let body = call.object().map_err(empty)?;
    let items = match body.get("userList") {
        None | Some(Value::Null) => return Err(empty("userList is required")),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(empty("userList must be an array")),
    };
    if items.is_empty() {
        return Err(fail(E::EmployeeListEmpty, "userList must not be empty"));
    }
    if items.len() > MAX_MEMBERS_PER_CALL {
        return Err(fail(
            E::TooManyEmployees,
            format!("userList has {} employees", items.len()),
        ));
    }
    let enterprise = call.path("enterpriseGlobalId");
    let mut state = sim.state_mut();
    let Some(code) = state.enterprises.get(enterprise).map(|e| e.code.clone()) else {
        return Err(fail(
            E::EnterpriseSuffixEmpty,
            format!("no enterprise {enterprise:?}, so no enterprise code to append"),
        ));
    };
    let mut result = m::AddMembersResult {
        succeeded: Vec::new(),
        failed: Vec::new(),
    };
    let mut first_failure = None;
    for item in items {
        match add_one(sim, &mut state, enterprise, &code, item) {
            Ok(member) => result.succeeded.push(member),
            Err(failure) => {
                let user_name = match item.get("userName") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                };
                result.failed.push(m::FailedMember {
                    user_name,
                    message: format!("{}: {}", failure.message, failure.cause),
                });
                first_failure.get_or_insert(failure);
            }
        }
    }
    match first_failure {
        None => Ok(result),
        Some(failure) if result.succeeded.is_empty() => Err(failure),
        Some(_) => {
            let cause = format!(
                "{} of {} employees failed",
                result.failed.len(),
                items.len()
            );
            Err(Failure {
                partial: Some(result),
                ..fail(E::PartialAddFailure, cause)
            })
        }
    }
}

fn add_one(
    sim: &Shared,
    state: &mut State,
    enterprise: &str,
    code: &str,
    item: &Value,
) -> Result<m::Member, Failure> {
    let Some(fields) = item.as_object() else {
        return Err(empty("each userList item must be an object"));
    };
    check_fields(fields, code)?;
    check_password(fields, &sim.config.password_length)?;
    let new: m::NewMember =
        serde_json::from_value(item.clone()).map_err(|e| empty(format!("userList item: {e}")))?;
    let account = String::from(new.user_name);
    if state
        .members_with_account(&account)
        .any(|m| m.enterprise == enterprise)
    {
        // The user center refuses to register an account twice.
        return Err(fail(
            E::UserCenterException,
            format!("the user center already has the account {account}@{code}"),
        ));
    }
    let limit = sim.config.trial_member_limit;
    if state.enterprises[enterprise].trial_members >= limit {
        return Err(Failure::with_message(
            E::TrialMemberLimit,
            format!("enterprise account may create at most {limit} trial member accounts"),
            format!("enterprise {enterprise} has {limit} trial members"),
        ));
    }
    let global_id = state.new_member(
        enterprise,
        NewMember {
            account,
            password: String::from(new.password),
            name: String::from(new.name),
            department: new.department_id,
            remark: new.remark.map(String::from),
            mobile: new.password_mobile.filter(|s| !s.is_empty()),
            trial: true,
        },
        sim.clock.now_ms(),
    );
    Ok(member_record(state, &state.members[&global_id]))
}

fn no_such_member(enterprise: &str, member: &str) -> Failure {
    fail(
        E::UserNotFound,
        format!("no employee {member:?} in enterprise {enterprise:?}"),
    )
}

/// The code `editMember` answers for a broken field rule. Its document row gives only
/// "name too long" (`30002`) and "remark too long" (`30003`) of the add operation's field
/// codes; every other rule (an empty or non-alphanumeric account, an empty name, a bad
/// mobile number or group id) answers "parameter empty" (`40000`), which it does give.
fn edit_code(failure: Failure) -> Failure {
    match failure.code {
        E::NameTooLong | E::RemarkTooLong | E::ParameterEmpty => failure,
        _ => Failure::with_message(
            E::ParameterEmpty,
            format!("parameter empty or invalid: {}", failure.cause),
            failure.cause,
        ),
    }
}

/// Sets the given fields (name, department, remark, security mobile); `userName` must
/// be valid but cannot change.
pub(crate) fn edit_member(sim: &Shared, call: &Call) -> Result<(), Failure> {
    let body = call.object().map_err(empty)?;
    let (enterprise, member) = (call.path("enterpriseGlobalId"), call.path("memberGlobalId"));
    let mut state = sim.state_mut();
    let code = state
        .enterprises
        .get(enterprise)
        .map(|e| e.code.clone())
        .unwrap_or_default();
    check_fields(&body, &code).map_err(edit_code)?;
    let edit: m::EditMemberRequest =
        serde_json::from_value(Value::Object(body)).map_err(|e| empty(e.to_string()))?;
    let Some(record) = state
        .members
        .get_mut(member)
        .filter(|m| m.enterprise == enterprise)
    else {
        return Err(no_such_member(enterprise, member));
    };
    record.name = String::from(edit.name);
    if let Some(department) = edit.department_id {
        record.department = Some(department);
    }
    if let Some(remark) = edit.remark {
        record.remark = Some(String::from(remark));
    }
    if let Some(mobile) = edit.password_mobile.filter(|s| !s.is_empty()) {
        record.mobile = Some(mobile);
    }
    record.updated = sim.clock.now_ms();
    Ok(())
}

/// Sets a new password of an accepted length.
pub(crate) fn reset_member_password(sim: &Shared, call: &Call) -> Result<(), Failure> {
    let body = call.object().map_err(empty)?;
    check_password(&body, &sim.config.password_length)?;
    let reset: m::ResetPasswordRequest =
        serde_json::from_value(Value::Object(body)).map_err(|e| empty(e.to_string()))?;
    let (enterprise, member) = (call.path("enterpriseGlobalId"), call.path("memberGlobalId"));
    let mut state = sim.state_mut();
    let Some(record) = state
        .members
        .get_mut(member)
        .filter(|m| m.enterprise == enterprise)
    else {
        return Err(no_such_member(enterprise, member));
    };
    record.password = String::from(reset.password);
    record.updated = sim.clock.now_ms();
    Ok(())
}

/// Removes the employee: its assets become unassigned and its loan ends.
pub(crate) fn delete_member(sim: &Shared, call: &Call) -> Result<(), Failure> {
    let (enterprise, member) = (call.path("enterpriseGlobalId"), call.path("memberGlobalId"));
    let mut state = sim.state_mut();
    if state
        .members
        .get(member)
        .is_none_or(|m| m.enterprise != enterprise)
    {
        return Err(no_such_member(enterprise, member));
    }
    state.remove_member(member, sim.clock.now_ms());
    Ok(())
}

/// A query parameter that is present but not acceptable: `40000`, the list's one
/// parameter code, with a message saying what is wrong rather than "parameter empty".
fn bad_parameter(message: String, value: &str) -> Failure {
    let cause = format!("{message} (is {value:?})");
    Failure::with_message(E::ParameterEmpty, message, cause)
}

/// A required positive `int32` query parameter.
fn page_parameter(call: &Call, name: &str) -> Result<i32, Failure> {
    let value = call
        .query(name)
        .ok_or_else(|| empty(format!("{name} is required")))?;
    match value.parse::<i32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(bad_parameter(
            format!("{name} must be a positive 32-bit integer"),
            value,
        )),
    }
}

/// One page of the enterprise's employees, oldest first, filtered by department and by
/// a keyword found (case-insensitively) in the name or the account.
pub(crate) fn list_members(sim: &Shared, call: &Call) -> Result<m::MemberPage, Failure> {
    let page_num = page_parameter(call, "pageNum")?;
    let page_size = page_parameter(call, "pageSize")?;
    if page_size > MAX_PAGE_SIZE {
        return Err(bad_parameter(
            format!("pageSize must be at most {MAX_PAGE_SIZE}"),
            &page_size.to_string(),
        ));
    }
    let department = match call.query("departmentId") {
        None => None,
        Some(value) => Some(value.parse::<i64>().map_err(|_| {
            bad_parameter("departmentId must be a 64-bit integer".to_string(), value)
        })?),
    };
    let keyword = call
        .query("keyword")
        .map(|k| k.trim().to_lowercase())
        .filter(|k| !k.is_empty());
    let state = sim.state();
    // An unknown enterprise has no employees.
    let Some(enterprise) = state.enterprises.get(call.path("enterpriseGlobalId")) else {
        return Ok(page(&[], page_num, page_size, Clone::clone));
    };
    // Only the page's own items are built: a page of a 100,000-employee enterprise costs
    // a slice (or, filtered, a pass over references), not 100,000 list items.
    if department.is_none() && keyword.is_none() {
        let ids: &[String] = &enterprise.members;
        return Ok(page(ids, page_num, page_size, |id| {
            list_item(&state, &state.members[id])
        }));
    }
    let matching: Vec<&Member> = enterprise
        .members
        .iter()
        .filter_map(|id| state.members.get(id))
        .filter(|m| department.is_none_or(|d| m.department == Some(d)))
        .filter(|m| {
            keyword.as_deref().is_none_or(|k| {
                m.name.to_lowercase().contains(k)
                    || m.user_name(&enterprise.code).to_lowercase().contains(k)
            })
        })
        .collect();
    Ok(page(&matching, page_num, page_size, |m| {
        list_item(&state, m)
    }))
}

fn list_item(state: &State, member: &Member) -> m::MemberListItem {
    let enterprise = &state.enterprises[&member.enterprise];
    m::MemberListItem {
        id: member.id.to_string(),
        user_id: member.user_id.to_string(),
        global_id: member.global_id.clone(),
        enterprise_id: enterprise.id.to_string(),
        // The list item's department fields are not nullable: 0 and "" mean none.
        department_id: member.department.unwrap_or(0),
        department_name: member.department.map(department_name).unwrap_or_default(),
        user_name: member.user_name(&enterprise.code),
        password_mobile: member.mobile.clone().unwrap_or_default(),
        name: member.name.clone(),
        asset_nums: member.assets.iter().cloned().collect(),
        borrow_num: member.borrow.clone().unwrap_or_default(),
        online_flag: false,
        remark: member.remark.clone().unwrap_or_default(),
        deleted: false,
        update_time: member.updated,
        create_time: member.created,
        bound_user_info: Some(Value::Null),
    }
}

fn to_i32(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Page `page_num` of `all`, each of its items made by `item` (only the page's are made),
/// with PageHelper's `PageInfo` semantics (`reasonable` off: a page past the end
/// is empty, not clamped), 8 navigation page numbers, made self-consistent on every page:
///
/// - `size` items from `startRow` to `endRow` (1-based, inclusive); both 0 when empty;
/// - `navigatepageNums` are real pages (1 to `pages`, empty when there are none), around
///   the current page or, past the end, the last ones; `firstPage`/`lastPage` are their
///   ends;
/// - `prePage` is the page before, or the last page when the current one is past the end
///   (PageHelper would name the page before, itself empty), 0 when there is none, and
///   `hasPreviousPage` is `prePage > 0`;
/// - `nextPage` is the page after while there is one, else 0, and `hasNextPage` is
///   `nextPage > 0`; `isLastPage` is its negation (no page follows; true past the end);
/// - `isFirstPage` is `pageNum == 1`.
fn page<T>(
    all: &[T],
    page_num: i32,
    page_size: i32,
    item: impl Fn(&T) -> m::MemberListItem,
) -> m::MemberPage {
    let (num, size) = (i64::from(page_num), i64::from(page_size));
    let total = all.len() as i64;
    let pages = (total + size - 1) / size;
    let offset = (num - 1) * size;
    let list: Vec<_> = usize::try_from(offset)
        .ok()
        .and_then(|offset| all.get(offset..))
        .unwrap_or_default()
        .iter()
        .take(page_size as usize)
        .map(item)
        .collect();
    let on_page = list.len() as i64;
    let (start_row, end_row) = if on_page == 0 {
        (0, 0)
    } else {
        (offset + 1, offset + on_page)
    };
    let navigation = navigate(num.min(pages), pages);
    let pre_page = if num > pages {
        pages
    } else if num > 1 {
        num - 1
    } else {
        0
    };
    let next_page = if num < pages { num + 1 } else { 0 };
    m::MemberPage {
        page_num,
        page_size,
        size: to_i32(on_page),
        order_by: Some(Value::Null),
        start_row: to_i32(start_row),
        end_row: to_i32(end_row),
        total: to_i32(total),
        pages: to_i32(pages),
        list,
        first_page: navigation.first().copied().unwrap_or(0),
        pre_page: to_i32(pre_page),
        next_page: to_i32(next_page),
        last_page: navigation.last().copied().unwrap_or(0),
        is_first_page: num == 1,
        is_last_page: next_page == 0,
        has_previous_page: pre_page > 0,
        has_next_page: next_page > 0,
        navigate_pages: NAVIGATE_PAGES as i32,
        navigatepage_nums: navigation,
    }
}

/// PageHelper's navigation numbers: all pages when there are at most 8, otherwise 8
/// consecutive numbers around the current page, shifted to stay within the pages.
fn navigate(page_num: i64, pages: i64) -> Vec<i32> {
    if pages <= NAVIGATE_PAGES {
        return (1..=pages).map(to_i32).collect();
    }
    let start = if page_num - NAVIGATE_PAGES / 2 < 1 {
        1
    } else if page_num + NAVIGATE_PAGES / 2 > pages {
        pages - NAVIGATE_PAGES + 1
    } else {
        page_num - NAVIGATE_PAGES / 2
    };
    (start..start + NAVIGATE_PAGES).map(to_i32).collect()
}

/// An enterprise the member center does not know has no licensing customer (`60017`).
fn enterprise_assets<'s>(
    state: &'s State,
    call: &Call,
) -> Result<impl Iterator<Item = &'s Asset>, Failure> {
    let enterprise = call.path("enterpriseGlobalId");
    let Some(ent) = state.enterprises.get(enterprise) else {
        return Err(fail(
            E::NotBoundToLicensingCustomer,
            format!("enterprise {enterprise:?} is not bound to a licensing customer"),
        ));
    };
    Ok(ent.assets.iter().filter_map(|num| state.assets.get(num)))
}

/// Every active asset of the enterprise: its holder, and whether it takes part in a loan.
pub(crate) fn list_asset_nums(
    sim: &Shared,
    call: &Call,
) -> Result<Vec<m::EnterpriseAsset>, Failure> {
    let state = sim.state();
    Ok(enterprise_assets(&state, call)?
        .map(|a| m::EnterpriseAsset {
            asset_num: a.num.clone(),
            asset_id: a.id.clone(),
            cloud_account_global_id: a.holder.clone(),
            borrowed_flag: a.lent_into.is_some() || state.loans.contains_key(&a.num),
            online_flag: false,
        })
        .collect())
}

/// The enterprise's lent locks (assets bought with `borrowedUsbKey`), with the employee
/// each is lent to.
pub(crate) fn list_lent_locks(sim: &Shared, call: &Call) -> Result<Vec<m::LentLock>, Failure> {
    let state = sim.state();
    Ok(enterprise_assets(&state, call)?
        .filter(|a| a.lent_lock)
        .map(|a| {
            let loan = state.loans.get(&a.num);
            m::LentLock {
                asset_id: a.id.clone(),
                asset_num: a.num.clone(),
                borrowed_flag: loan.is_some(),
                cloud_account_global_id: loan.map(|l| l.member.clone()),
            }
        })
        .collect())
}

/// The products outside packages and the package tree of an asset.
pub(crate) fn list_asset_products(sim: &Shared, call: &Call) -> Result<m::AssetProducts, Failure> {
    let id = call.path("assetId");
    let state = sim.state();
    let Some(asset) = state
        .asset_ids
        .get(id)
        .and_then(|num| state.assets.get(num))
    else {
        return Err(fail(
            E::AssetNumberNotFound,
            format!("no asset with id {id:?}"),
        ));
    };
    // Lending moves the rights (the member-center state table): a source asset whose
    // rights are lent lists none of them; the lent lock lists its own and the lent ones.
    let mut sources: Vec<&Asset> = Vec::new();
    if asset.lent_into.is_none() {
        sources.push(asset);
    }
    if let Some(loan) = state.loans.get(&asset.num) {
        sources.extend(
            loan.assets
                .iter()
                .filter_map(|id| state.asset_ids.get(id))
                .filter_map(|num| state.assets.get(num)),
        );
    }
    Ok(m::AssetProducts {
        product_instance_list: sources
            .iter()
            .flat_map(|a| a.products.iter().map(|p| product_instance(a, p)))
            .collect(),
        children: sources
            .iter()
            .flat_map(|a| a.merchandises.iter().map(|p| package_node(a, p)))
            .collect(),
    })
}

fn product_instance(asset: &Asset, p: &ProductRecord) -> m::ProductInstance {
    let product = &p.product;
    let extended = !product.product_features.is_empty();
    m::ProductInstance {
        id: m::ProductInstanceId::Int64(p.id),
        license_type: p.origin.license_type.clone(),
        customer_id: p.origin.customer.clone(),
        asset_id: Some(asset.id.clone()),
        asset_ins_id: Some(product.parent_crm_product_id.clone()),
        merchandise_ins_id: p.merchandise.clone(),
        asset_num: Some(asset.num.clone()),
        product_uri: product.product_uri.clone(),
        gms_pid: product.gms_pid.clone().unwrap_or_default(),
        app_key: product.app_key.clone().unwrap_or_default(),
        product_name: product.product_name.clone(),
        channel_code: p.origin.channel_code.clone(),
        license_order_id: p.origin.order.clone(),
        channel_order_id: p.origin.channel_order_id.clone(),
        // Absent dates are reported as 0 (the fields are not nullable).
        limit_start_time: product.limit_start_date.unwrap_or(0),
        limit_end_time: product.limit_end_date.unwrap_or(0),
        limit_amount: 0,
        limit_concurrent: product.limit_concurrent,
        limit_time_duration: product.limit_time_duration,
        trial: product.trial,
        trial_end_date: Some(product.trial_end_date),
        limit_type: if extended {
            LimitType::Feature
        } else {
            LimitType::Basic
        },
        prod_def_extend: extended,
        time_duration_expression: Some(product.time_duration_expression.clone()),
        src_license_order_id: product
            .src_license_order_id
            .clone()
            .or_else(|| p.origin.src_order.clone()),
        create_time: p.origin.created,
        update_time: None,
        activate_flag: true,
        crm_product_id: product.crm_product_id.clone(),
        product_extend_instance_list: Vec::new(),
    }
}

fn package_node(asset: &Asset, p: &MerchandiseRecord) -> m::MerchandiseNode {
    m::MerchandiseNode {
        id: m::ProductInstanceId::Int64(p.id),
        license_type: p.origin.license_type.clone(),
        merchandise_num: p.num.clone(),
        merchandise_name: p.name.clone(),
        parent_id: Some(p.parent.map_or(Value::Null, Value::from)),
        parent_merchandise_num: p.parent_num.clone(),
        customer_id: p.origin.customer.clone(),
        license_order_id: p.origin.order.clone(),
        channel_order_id: p.origin.channel_order_id.clone(),
        create_time: p.origin.created,
        update_time: None,
        channel_code: p.origin.channel_code.clone(),
        time_duration_expression: Some(p.time_expression.clone()),
        src_license_order_id: p.origin.src_order.clone(),
        children: Some(p.children.iter().map(|c| package_node(asset, c)).collect()),
        product_instance_list: Some(
            p.products
                .iter()
                .map(|product| product_instance(asset, product))
                .collect(),
        ),
    }
}

/// The employee a configure call names: by global id or, failing that, by account
/// (`alice`, or `alice@code` with the enterprise code). No match answers `60026`, a bare
/// account found in several enterprises `60023`.
fn resolve_member(state: &State, key: &str) -> Result<String, Failure> {
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
pub(crate) fn configure_member_assets(sim: &Shared, call: &Call) -> Result<(), Failure> {
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

/// Moves the rights of the employee's assets into a lent lock.
///
/// Checked in this order: body (`40000`), employee by global id (`60026`), the lent lock
/// exists, was bought as a lent lock and is enabled (`33008`), it belongs to the
/// employee's enterprise (`33009`), it is not lent to another employee (`33018`), each
/// asset is assigned to the employee (`33003`), is not lent into another lock (`33007`)
/// and carries a product with at least one node (`33006`), and the employee borrows with
/// no other lent lock (`33009`).
pub(crate) fn lend_assets(sim: &Shared, call: &Call) -> Result<(), Failure> {
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
fn check_lend_request(req: &m::LendAssetsRequest) -> Result<&str, Failure> {
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
fn check_lent_lock(state: &State, member_id: &str, lock_num: &str) -> Result<(), Failure> {
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
fn check_lendable(state: &State, member_id: &str, lock_num: &str, id: &str) -> Result<(), Failure> {
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
fn record_loan(state: &mut State, member_id: &str, lock_num: &str, asset_ids: &[String]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<m::MemberListItem> {
        let item: m::MemberListItem = serde_json::from_value(serde_json::json!({
            "id": "1", "userId": "2", "globalId": "MG", "enterpriseId": "3",
            "departmentId": 0, "departmentName": "", "userName": "a@b",
            "passwordMobile": "", "name": "A", "assetNums": [], "borrowNum": "",
            "onlineFlag": false, "remark": "", "deleted": false,
            "updateTime": 0, "createTime": 0
        }))
        .unwrap();
        vec![item; n]
    }

    #[test]
    fn page_helper_semantics() {
        let all = items(25);
        let p = page(&all, 2, 10, Clone::clone);
        assert_eq!(
            (p.size, p.start_row, p.end_row, p.total, p.pages),
            (10, 11, 20, 25, 3)
        );
        assert_eq!(
            (p.pre_page, p.next_page, p.first_page, p.last_page),
            (1, 3, 1, 3)
        );
        assert!(!p.is_first_page && !p.is_last_page && p.has_previous_page && p.has_next_page);
        assert_eq!(p.navigatepage_nums, [1, 2, 3]);

        let last = page(&all, 3, 10, Clone::clone);
        assert_eq!(
            (last.size, last.start_row, last.end_row, last.next_page),
            (5, 21, 25, 0)
        );
        assert!(last.is_last_page && !last.has_next_page);

        let past = page(&all, 9, 10, Clone::clone);
        assert_eq!((past.size, past.start_row, past.end_row), (0, 0, 0));
        assert!(past.is_last_page && !past.has_next_page && past.has_previous_page);
        assert_eq!(
            (
                past.pre_page,
                past.next_page,
                past.first_page,
                past.last_page
            ),
            (3, 0, 1, 3)
        );
        assert_eq!(past.navigatepage_nums, [1, 2, 3]);

        // Past the end of many pages: the navigation shows the last 8.
        let many = items(200);
        let far = page(&many, 1000, 10, Clone::clone);
        assert_eq!((far.pre_page, far.next_page, far.pages), (20, 0, 20));
        assert_eq!(far.navigatepage_nums, (13..=20).collect::<Vec<_>>());
        assert!(far.has_previous_page && far.is_last_page && !far.has_next_page);

        // No items at all, asked for a later page: nothing before, nothing after.
        let nothing = page(&[], 5, 10, Clone::clone);
        assert_eq!((nothing.pre_page, nothing.next_page), (0, 0));
        assert!(!nothing.has_previous_page && !nothing.has_next_page && nothing.is_last_page);

        let none = page(&[], 1, 10, Clone::clone);
        assert_eq!(
            (none.total, none.pages, none.first_page, none.last_page),
            (0, 0, 0, 0)
        );
        assert!(none.is_first_page && none.is_last_page);
        assert!(none.navigatepage_nums.is_empty());

        let huge = page(&all, i32::MAX, i32::MAX, Clone::clone);
        assert_eq!(huge.size, 0);
    }

    #[test]
    fn navigation_window() {
        assert_eq!(navigate(1, 20), [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(navigate(10, 20), [6, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(navigate(19, 20), [13, 14, 15, 16, 17, 18, 19, 20]);
        assert_eq!(navigate(2, 3), [1, 2, 3]);
    }
}
