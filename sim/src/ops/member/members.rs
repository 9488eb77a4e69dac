//! Employees: add, edit, reset password, delete.

use super::*;

/// Adds up to 100 employees. Each item is checked on its own; when every item fails the
/// reply is the first item's code, when only some fail it is `60027` with both lists.
pub(crate) fn add_members(sim: &Db, call: &Call) -> Result<m::AddMembersResult, Failure> {
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
    let c = &sim.config;
    Settings::room(
        state.members.len(),
        items.len(),
        c.max_members,
        "employees",
        "--max-employees",
    )
    .map_err(empty)?;
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

pub(super) fn add_one(
    sim: &Db,
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
    if state.has_account(enterprise, &account) {
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

pub(super) fn no_such_member(enterprise: &str, member: &str) -> Failure {
    fail(
        E::UserNotFound,
        format!("no employee {member:?} in enterprise {enterprise:?}"),
    )
}

/// The employee `member` of `enterprise`, to change.
fn member_mut<'s>(
    state: &'s mut State,
    enterprise: &str,
    member: &str,
) -> Result<&'s mut Member, Failure> {
    state
        .members
        .get_mut(member)
        .filter(|m| m.enterprise == enterprise)
        .ok_or_else(|| no_such_member(enterprise, member))
}

/// The code `editMember` answers for a broken field rule. Its document row gives only
/// "name too long" (`30002`) and "remark too long" (`30003`) of the add operation's field
/// codes; every other rule (an empty or non-alphanumeric account, an empty name, a bad
/// mobile number or group id) answers "parameter empty" (`40000`), which it does give.
pub(super) fn edit_code(failure: Failure) -> Failure {
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
pub(crate) fn edit_member(sim: &Db, call: &Call) -> Result<(), Failure> {
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
    let record = member_mut(&mut state, enterprise, member)?;
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
pub(crate) fn reset_member_password(sim: &Db, call: &Call) -> Result<(), Failure> {
    let body = call.object().map_err(empty)?;
    check_password(&body, &sim.config.password_length)?;
    let reset: m::ResetPasswordRequest =
        serde_json::from_value(Value::Object(body)).map_err(|e| empty(e.to_string()))?;
    let (enterprise, member) = (call.path("enterpriseGlobalId"), call.path("memberGlobalId"));
    let mut state = sim.state_mut();
    let record = member_mut(&mut state, enterprise, member)?;
    record.password = String::from(reset.password);
    record.updated = sim.clock.now_ms();
    Ok(())
}

/// Removes the employee: its assets become unassigned and its loan ends.
pub(crate) fn delete_member(sim: &Db, call: &Call) -> Result<(), Failure> {
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
