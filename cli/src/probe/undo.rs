//! Undoing the writes a ledger announced: each once, newest first, and one whose outcome
//! (or whose undo's outcome) is unknown only after a read on the deployment shows that
//! it is applied and not yet undone. Nothing is written to an id outside the ledger's
//! allow-list, nor to an employee a read does not show as the probe's own.

use serde_json::{Value, json};

use super::{
    context::{Inputs, Probe},
    http::Answer,
    ledger::{Entry, Ledger, MemberFields, Record, Write},
    outcome,
};
use crate::error::CliError;

/// The operator the probe's lock requests name.
pub const OPERATOR: &str = "licensing probe";

/// Whether the run may write `write`: its enterprise and lock are on the allow-list.
pub fn allowed(inputs: &Inputs, write: &Write) -> Result<(), String> {
    let enterprise = |e: &String| {
        if inputs.enterprises.contains(e) {
            Ok(())
        } else {
            Err(format!(
                "enterprise `{e}` is not on the allow-list (--enterprise)"
            ))
        }
    };
    match write {
        Write::DisableLock {
            enterprise: e,
            asset,
        } => {
            enterprise(e)?;
            if inputs.assets.contains(asset) {
                Ok(())
            } else {
                Err(format!("lock `{asset}` is not on the allow-list (--asset)"))
            }
        }
        Write::UnknownLock { asset } if asset.starts_with(UNKNOWN_LOCK_PREFIX) => Ok(()),
        Write::UnknownLock { asset } => {
            Err(format!("`{asset}` is not a number of the probe's own"))
        }
        Write::AddMember { enterprise: e, .. } | Write::EditMember { enterprise: e, .. } => {
            enterprise(e)
        }
        Write::Irreversible { .. } => Ok(()),
    }
}

/// How every lock number the probe makes up starts: letters, where the document gives
/// asset numbers as digit strings, so that no enterprise can hold one.
pub const UNKNOWN_LOCK_PREFIX: &str = "probe-no-such-lock-";

/// A lock's `locked`, as the virtual assets of its enterprise show it; `None` when the
/// list does not show the lock, `Err` when the list could not be read.
pub async fn lock_state(
    probe: &Probe<'_>,
    enterprise: &str,
    asset: &str,
) -> Result<Option<bool>, String> {
    let spec = probe.spec(licensing_sdk::operations::Service::Order);
    let op = spec.op("listVirtualAssets").ok_or("no listVirtualAssets")?;
    let request = probe.request(
        spec,
        op,
        &[("enterpriseGlobalId", enterprise.to_string())],
        None,
    )?;
    let json = read(probe, spec, op, &request).await?;
    Ok(json
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|a| a.get("assetNum").and_then(Value::as_str) == Some(asset))
        .and_then(|a| a.get("locked").and_then(Value::as_bool)))
}

/// The probe employee with account `user_name` in `enterprise`, as the employee list
/// shows it: its id and its editable fields; `None` when the list does not show it.
pub async fn probe_member(
    probe: &Probe<'_>,
    enterprise: &str,
    user_name: &str,
) -> Result<Option<(String, MemberFields)>, String> {
    let spec = probe.spec(licensing_sdk::operations::Service::Member);
    let op = spec.op("listMembers").ok_or("no listMembers")?;
    let request = probe.request(
        spec,
        op,
        &[
            ("enterpriseGlobalId", enterprise.to_string()),
            ("keyword", user_name.to_string()),
            ("pageNum", "1".into()),
            ("pageSize", "10".into()),
        ],
        None,
    )?;
    let json = read(probe, spec, op, &request).await?;
    let item = json
        .pointer("/data/list")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        // The account, as the probe gave it, with the enterprise's code appended.
        .find(|m| {
            m.get("userName")
                .and_then(Value::as_str)
                .is_some_and(|u| u.starts_with(user_name))
        });
    Ok(item.and_then(|m| {
        let id = m.get("globalId").and_then(Value::as_str)?.to_string();
        let fields = MemberFields {
            name: m.get("name").and_then(Value::as_str)?.to_string(),
            department_id: m.get("departmentId").and_then(Value::as_i64),
            remark: m.get("remark").and_then(Value::as_str).map(str::to_string),
            password_mobile: m
                .get("passwordMobile")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        };
        Some((id, fields))
    }))
}

/// A read's JSON, when it was processed as a success.
async fn read(
    probe: &Probe<'_>,
    spec: &super::plan::Spec,
    op: &licensing_spec::Op,
    request: &super::http::Request,
) -> Result<Value, String> {
    let answer = probe.send_undo(request).await;
    let json = outcome::envelope(spec, &op.reply, &answer).map_err(|(_, why)| why)?;
    if outcome::success(&json) {
        Ok(json)
    } else {
        Err(format!(
            "{} was refused with {}",
            op.id,
            outcome::code(&json).unwrap_or_default()
        ))
    }
}

/// What an undo came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Undo {
    /// Undone now (or before, by this run).
    Done,
    /// Nothing to undo: the write was not applied, or a read shows it undone.
    NotNeeded,
    /// Still to undo: why. `licensing probe --finish` tries again.
    Left(String),
}

/// Undoes every write of the ledger still open, newest first; the ones left, with why.
pub async fn all(probe: &Probe<'_>, ledger: &mut Ledger) -> Result<Vec<(u64, String)>, CliError> {
    let open: Vec<u64> = ledger
        .entries
        .iter()
        .rev()
        .filter(|(_, e)| e.open())
        .map(|(s, _)| *s)
        .collect();
    let mut left = Vec::new();
    for seq in open {
        if let Undo::Left(why) = one(probe, ledger, seq).await? {
            left.push((seq, why));
        }
    }
    Ok(left)
}

/// Undoes write `seq` if it is open: read back first unless the ledger shows it applied
/// with no undo tried.
pub async fn one(probe: &Probe<'_>, ledger: &mut Ledger, seq: u64) -> Result<Undo, CliError> {
    let Some(entry) = ledger.entries.get(&seq).cloned() else {
        return Ok(Undo::NotNeeded);
    };
    if entry.undone.is_some() {
        return Ok(Undo::Done);
    }
    if !entry.open() {
        return Ok(Undo::NotNeeded);
    }
    if let Err(why) = allowed(&ledger.run.inputs, &entry.write) {
        return Ok(Undo::Left(format!("not written to: {why}")));
    }
    let plan = match needed(probe, &entry).await {
        Ok(plan) => plan,
        Err(why) => {
            return Ok(Undo::Left(format!(
                "cannot tell whether it is undone: {why}"
            )));
        }
    };
    let Some(request) = plan else {
        ledger.append(Record::Undone {
            seq,
            result: "not needed".into(),
        })?;
        return Ok(Undo::NotNeeded);
    };
    ledger.append(Record::Undoing { seq })?;
    let answer = probe.send_undo(&request).await;
    let result = undo_result(probe, &entry.write, &request, &answer);
    match result {
        Ok(result) => {
            ledger.append(Record::Undone {
                seq,
                result: result.into(),
            })?;
            Ok(Undo::Done)
        }
        Err(why) => Ok(Undo::Left(why)),
    }
}

/// The request that undoes `entry`, or none when a read shows nothing to undo.
async fn needed(probe: &Probe<'_>, entry: &Entry) -> Result<Option<super::http::Request>, String> {
    let known_applied = entry.written.as_deref() == Some("applied") && !entry.undoing;
    match &entry.write {
        Write::DisableLock { enterprise, asset } => {
            // Enabling sets the state read before the disable, so when the list cannot
            // show the lock the enable is sent all the same.
            let locked = if known_applied {
                Some(true)
            } else {
                lock_state(probe, enterprise, asset).await?
            };
            Ok((locked != Some(false))
                .then(|| enable(probe, asset))
                .transpose()?)
        }
        Write::UnknownLock { asset } => {
            Ok(known_applied.then(|| enable(probe, asset)).transpose()?)
        }
        Write::AddMember {
            enterprise,
            user_name,
        } => {
            let Some((id, _)) = probe_member(probe, enterprise, user_name).await? else {
                return Ok(None);
            };
            if entry.member.as_ref().is_some_and(|m| *m != id) {
                return Err(format!(
                    "the add answered employee `{}`, the list shows `{id}` with the probe's account",
                    entry.member.as_deref().unwrap_or_default()
                ));
            }
            let spec = probe.spec(licensing_sdk::operations::Service::Member);
            let op = spec.op("deleteMember").ok_or("no deleteMember")?;
            probe
                .request(
                    spec,
                    op,
                    &[
                        ("enterpriseGlobalId", enterprise.clone()),
                        ("memberGlobalId", id),
                    ],
                    None,
                )
                .map(Some)
        }
        Write::EditMember {
            enterprise,
            member,
            user_name,
            before,
        } => {
            let Some((id, now)) = probe_member(probe, enterprise, user_name).await? else {
                return Ok(None);
            };
            if id != *member {
                return Err(format!(
                    "the list shows `{id}` with the probe's account, the edit went to `{member}`"
                ));
            }
            if now == *before {
                return Ok(None);
            }
            edit(probe, enterprise, member, user_name, before).map(Some)
        }
        Write::Irreversible { .. } => Ok(None),
    }
}

/// `enableLocks` of one lock.
pub fn enable(probe: &Probe<'_>, asset: &str) -> Result<super::http::Request, String> {
    lock_request(probe, "enableLocks", asset)
}

/// `disableLocks` or `enableLocks` of one lock.
pub fn lock_request(
    probe: &Probe<'_>,
    operation: &str,
    asset: &str,
) -> Result<super::http::Request, String> {
    let spec = probe.spec(licensing_sdk::operations::Service::Order);
    let op = spec
        .op(operation)
        .ok_or_else(|| format!("no {operation}"))?;
    let body = json!({"assetNums": [asset], "operatorIdentity": OPERATOR});
    probe.request(spec, op, &[], Some(body.to_string().into_bytes()))
}

/// `editMember` of the probe employee to `fields`' name. The optional fields are left
/// out: the probe never set them, and sending a value read back (a department shown as
/// `0`) could set what was unset.
pub fn edit(
    probe: &Probe<'_>,
    enterprise: &str,
    member: &str,
    user_name: &str,
    fields: &MemberFields,
) -> Result<super::http::Request, String> {
    let spec = probe.spec(licensing_sdk::operations::Service::Member);
    let op = spec.op("editMember").ok_or("no editMember")?;
    let body = json!({"userName": user_name, "name": fields.name});
    probe.request(
        spec,
        op,
        &[
            ("enterpriseGlobalId", enterprise.to_string()),
            ("memberGlobalId", member.to_string()),
        ],
        Some(body.to_string().into_bytes()),
    )
}

/// An undo's outcome: `applied`, `not needed` (the deployment says there was nothing to
/// undo), or `Err` when it is unknown.
fn undo_result(
    probe: &Probe<'_>,
    write: &Write,
    request: &super::http::Request,
    answer: &Answer,
) -> Result<&'static str, String> {
    let spec = probe.spec(request.service);
    let op = spec
        .op(&request.operation)
        .ok_or_else(|| format!("no {}", request.operation))?;
    let json = outcome::envelope(spec, &op.reply, answer)
        .map_err(|(_, why)| format!("the undo ({}): {why}", op.id))?;
    if outcome::success(&json) {
        let lock = matches!(write, Write::DisableLock { .. } | Write::UnknownLock { .. });
        let status = json.pointer("/data/0/status").and_then(Value::as_i64);
        return match (lock, status) {
            (false, _) | (true, Some(1)) => Ok("applied"),
            (true, other) => Err(format!("the enable answered item status {other:?}, not 1")),
        };
    }
    match (write, outcome::code(&json).as_deref()) {
        // The employee is gone already (a repeat after a lost reply).
        (Write::AddMember { .. }, Some("60002")) => Ok("not needed"),
        (_, code) => Err(format!(
            "the undo ({}) was refused with {}",
            op.id,
            code.unwrap_or("no code")
        )),
    }
}
