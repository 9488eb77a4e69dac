//! The write tiers: reversible writes on allow-listed ids, each announced in the ledger
//! before it is sent and undone (read back first) before the check ends, at most
//! `--max-writes` of them; and, with `--irreversible` against a simulator, writes that
//! cannot be taken back.

use serde_json::{Value, json};

use super::{
    context::Probe,
    http::Answer,
    ledger::{Ledger, MemberFields, Record, Write},
    outcome::{self, Judged, departs, documented, not_run},
    undo::{self, UNKNOWN_LOCK_PREFIX, Undo},
};
use crate::error::CliError;
use licensing_sdk::operations::Service;

/// What a write came to, as the ledger records it.
fn written(answer: &Answer, applied: bool) -> &'static str {
    match answer {
        Answer::NotSent(_) => "not sent",
        Answer::Lost(_) => "unknown",
        Answer::Reply(_) if applied => "applied",
        Answer::Reply(_) => "refused",
    }
}

/// Announces `write` in the ledger, unless the run is stopping, the budget is spent or
/// the allow-list does not hold it: its number, or why it is not written.
fn announce(
    probe: &Probe<'_>,
    ledger: &mut Ledger,
    write: Write,
) -> Result<Result<u64, Judged>, CliError> {
    if let Some(why) = probe.http.stopping() {
        return Ok(Err(not_run(why)));
    }
    if ledger.writes() >= ledger.run.max_writes {
        return Ok(Err(not_run(format!(
            "the run's {} writes are spent (--max-writes)",
            ledger.run.max_writes
        ))));
    }
    if let Err(why) = undo::allowed(&ledger.run.inputs, &write) {
        return Ok(Err(not_run(format!("not written: {why}"))));
    }
    ledger.intent(write).map(Ok)
}

/// Undoes `seq` as the check ends: a judgement when it could not be.
async fn undo_now(
    probe: &Probe<'_>,
    ledger: &mut Ledger,
    seq: u64,
) -> Result<Option<Judged>, CliError> {
    Ok(match undo::one(probe, ledger, seq).await? {
        Undo::Done | Undo::NotNeeded => None,
        Undo::Left(why) => Some(not_run(format!(
            "write {seq} is not undone yet ({why}): `licensing probe --finish {}`",
            ledger.path().display()
        ))),
    })
}

/// The lock round trip: the first allow-listed lock an allow-listed enterprise's virtual
/// assets show as enabled is disabled, read back, enabled and read back.
pub async fn lock_round_trip(probe: &Probe<'_>, ledger: &mut Ledger) -> Result<Judged, CliError> {
    let inputs = &ledger.run.inputs;
    if inputs.assets.is_empty() {
        return Ok(not_run("no lock is allow-listed (--asset)"));
    }
    let mut target = None;
    let mut seen = Vec::new();
    for enterprise in &inputs.enterprises {
        for asset in &inputs.assets {
            match undo::lock_state(probe, enterprise, asset).await {
                Ok(Some(false)) => {
                    target = Some((enterprise.clone(), asset.clone()));
                    break;
                }
                Ok(Some(_)) => seen.push(format!("{asset} in {enterprise}: listed as locked")),
                Ok(None) => seen.push(format!("{asset} in {enterprise}: not listed")),
                Err(why) => {
                    return Ok(not_run(format!(
                        "the virtual assets could not be read: {why}"
                    )));
                }
            }
        }
        if target.is_some() {
            break;
        }
    }
    let Some((enterprise, asset)) = target else {
        return Ok(not_run(format!(
            "no allow-listed lock is read as enabled (`locked: false`) in an allow-listed \
             enterprise's virtual assets, and only such a lock is disabled ({})",
            seen.join(", ")
        )));
    };
    let write = Write::DisableLock {
        enterprise: enterprise.clone(),
        asset: asset.clone(),
    };
    let (seq, status) = match disable(probe, ledger, write, &asset).await? {
        Ok(sent) => sent,
        Err(judged) => return Ok(judged),
    };
    let mut verdict = match status {
        Ok(1) => match undo::lock_state(probe, &enterprise, &asset).await {
            Ok(Some(true)) => documented(""),
            Ok(state) => departs(format!(
                "status 1 for {asset}, but its enterprise's virtual assets then show locked = {state:?}"
            )),
            Err(why) => not_run(format!("the lock could not be read back: {why}")),
        },
        Ok(other) => departs(format!(
            "status {other} for a refillable lock read as enabled: the documents give 1"
        )),
        Err(judged) => judged,
    };
    if let Some(left) = undo_now(probe, ledger, seq).await? {
        return Ok(left);
    }
    if verdict.0 == outcome::Verdict::AsDocumented
        && undo::lock_state(probe, &enterprise, &asset).await != Ok(Some(false))
    {
        verdict = departs(format!(
            "{asset} was enabled again but does not read as enabled"
        ));
    }
    Ok(verdict)
}

/// `write`, a disable of `asset`, announced, sent and its outcome recorded: its number
/// and the reply's item status, or why it was not written.
async fn disable(
    probe: &Probe<'_>,
    ledger: &mut Ledger,
    write: Write,
    asset: &str,
) -> Result<Result<(u64, Result<i64, Judged>), Judged>, CliError> {
    let seq = match announce(probe, ledger, write)? {
        Ok(seq) => seq,
        Err(judged) => return Ok(Err(judged)),
    };
    let request = undo::lock_request(probe, "disableLocks", asset).map_err(CliError::usage)?;
    let answer = probe.send(&request).await;
    let (changed, status) = lock_status(probe, &answer);
    ledger.append(Record::Written {
        seq,
        result: written(&answer, changed).into(),
        member: None,
    })?;
    Ok(Ok((seq, status)))
}

/// A one-lock reply: whether it says the lock changed (item status 1 in a success,
/// whatever else the reply holds: what the ledger needs), and its item status, or the
/// judgement that ends the check when it is not a documented success.
fn lock_status(probe: &Probe<'_>, answer: &Answer) -> (bool, Result<i64, Judged>) {
    let changed = success_json(answer)
        .and_then(|j| j.pointer("/data/0/status").and_then(Value::as_i64))
        == Some(1);
    let spec = probe.spec(Service::Order);
    let op = spec.op("disableLocks").expect("checked by the plan");
    let json = match outcome::envelope(spec, &op.reply, answer) {
        Ok(json) => json,
        Err(judged) => return (changed, Err(judged)),
    };
    if !outcome::success(&json) {
        return (changed, Err(outcome::processed(spec, op, answer)));
    }
    let status = json
        .pointer("/data/0/status")
        .and_then(Value::as_i64)
        .ok_or_else(|| departs("a success without an item status"));
    (changed, status)
}

/// A reply's JSON when it says success, whatever else it holds.
fn success_json(answer: &Answer) -> Option<Value> {
    match answer {
        Answer::Reply(reply) => reply.json().filter(outcome::success),
        _ => None,
    }
}

/// A made-up lock number (letters, which no asset number has) disabled: status 2.
pub async fn unknown_lock(probe: &Probe<'_>, ledger: &mut Ledger) -> Result<Judged, CliError> {
    let asset = format!(
        "{UNKNOWN_LOCK_PREFIX}{}",
        licensing_sdk::runtime::nonce()
            .to_ascii_lowercase()
            .replace(['-', '_'], "x")
    );
    let write = Write::UnknownLock {
        asset: asset.clone(),
    };
    let (seq, status) = match disable(probe, ledger, write, &asset).await? {
        Ok(sent) => sent,
        Err(judged) => return Ok(judged),
    };
    let verdict = match status {
        Ok(2) => documented(""),
        Ok(other) => departs(format!("status {other} for a lock no enterprise has")),
        Err(judged) => judged,
    };
    Ok(undo_now(probe, ledger, seq).await?.unwrap_or(verdict))
}

/// The probe employee: added, listed, (edited, read back, set back,) deleted, read back.
/// The add's judgement and the edit's, when it was asked for.
pub async fn employee(
    probe: &Probe<'_>,
    ledger: &mut Ledger,
    with_edit: bool,
) -> Result<(Judged, Option<Judged>), CliError> {
    let Some(enterprise) = ledger.run.inputs.enterprises.first().cloned() else {
        return Ok((
            not_run("no enterprise is allow-listed (--enterprise)"),
            None,
        ));
    };
    let token = licensing_sdk::runtime::nonce();
    let account: String = token
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(12)
        .collect();
    let user_name = format!("probe{account}");
    let password = format!("Pp1{}", &token[..16.min(token.len())]);
    probe.http.secret(&password);
    let seq = match announce(
        probe,
        ledger,
        Write::AddMember {
            enterprise: enterprise.clone(),
            user_name: user_name.clone(),
        },
    )? {
        Ok(seq) => seq,
        Err(judged) => {
            let edit = with_edit.then(|| {
                not_run(format!(
                    "the probe employee was not added and found: {}",
                    judged.1
                ))
            });
            return Ok((judged, edit));
        }
    };
    let spec = probe.spec(Service::Member);
    let op = spec.op("addMembers").expect("checked by the plan");
    let body = json!({"userList": [{"userName": user_name, "password": password, "name": "licensing probe"}]});
    let request = probe
        .request(
            spec,
            op,
            &[("enterpriseGlobalId", enterprise.clone())],
            Some(body.to_string().into_bytes()),
        )
        .map_err(CliError::usage)?;
    let answer = probe.send(&request).await;
    // Whatever else the reply holds, a success may have created the employee.
    let added = success_json(&answer);
    let member = added
        .as_ref()
        .and_then(|j| j.pointer("/data/succeeded/0/globalId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    ledger.append(Record::Written {
        seq,
        result: written(&answer, added.is_some()).into(),
        member: member.clone(),
    })?;
    let documented_reply = outcome::envelope(spec, &op.reply, &answer);
    let mut verdict = match (&added, member, documented_reply) {
        (Some(_), _, Err(judged)) => judged,
        (None, _, _) => match outcome::processed(spec, op, &answer) {
            (outcome::Verdict::AsDocumented, why) => {
                not_run(format!("the probe employee was not added: {why}"))
            }
            other => other,
        },
        (Some(_), None, Ok(_)) => departs("a success whose `succeeded` names no employee"),
        (Some(_), Some(id), Ok(_)) => {
            match undo::probe_member(probe, &enterprise, &user_name).await {
                Ok(Some((listed, _))) if listed == id => documented(""),
                Ok(Some((listed, _))) => departs(format!("added as `{id}`, listed as `{listed}`")),
                Ok(None) => departs(format!(
                    "added as `{id}`, but the employee list does not show it"
                )),
                Err(why) => not_run(format!("the employee list could not be read: {why}")),
            }
        }
    };
    let edit = if with_edit && verdict.0 == outcome::Verdict::AsDocumented {
        Some(edit_restore(probe, ledger, &enterprise, &user_name).await?)
    } else if with_edit {
        Some(not_run(format!(
            "the probe employee was not added and found: {}",
            verdict.1
        )))
    } else {
        None
    };
    if let Some(left) = undo_now(probe, ledger, seq).await? {
        return Ok((left, edit));
    }
    if verdict.0 == outcome::Verdict::AsDocumented {
        match undo::probe_member(probe, &enterprise, &user_name).await {
            Ok(None) => {}
            Ok(Some((id, _))) => {
                verdict = departs(format!("`{id}` is still listed after its delete"))
            }
            Err(why) => {
                verdict = not_run(format!(
                    "the list could not be read after the delete: {why}"
                ))
            }
        }
    }
    Ok((verdict, edit))
}

/// The probe employee's name edited, read back, set back to what was read, read back.
async fn edit_restore(
    probe: &Probe<'_>,
    ledger: &mut Ledger,
    enterprise: &str,
    user_name: &str,
) -> Result<Judged, CliError> {
    let (member, before) = match undo::probe_member(probe, enterprise, user_name).await {
        Ok(Some(found)) => found,
        Ok(None) => return Ok(not_run("the probe employee is not listed")),
        Err(why) => {
            return Ok(not_run(format!(
                "the employee list could not be read: {why}"
            )));
        }
    };
    let seq = match announce(
        probe,
        ledger,
        Write::EditMember {
            enterprise: enterprise.to_string(),
            member: member.clone(),
            user_name: user_name.to_string(),
            before: before.clone(),
        },
    )? {
        Ok(seq) => seq,
        Err(judged) => return Ok(judged),
    };
    let after = MemberFields {
        name: "licensing probe edited".into(),
        ..before.clone()
    };
    let request =
        undo::edit(probe, enterprise, &member, user_name, &after).map_err(CliError::usage)?;
    let answer = probe.send(&request).await;
    let spec = probe.spec(Service::Member);
    let op = spec.op("editMember").expect("checked by the plan");
    let processed = outcome::processed(spec, op, &answer);
    let applied =
        matches!(&answer, Answer::Reply(r) if r.json().is_some_and(|j| outcome::success(&j)));
    ledger.append(Record::Written {
        seq,
        result: written(&answer, applied).into(),
        member: None,
    })?;
    let mut verdict = match (applied, processed) {
        (true, (outcome::Verdict::Departs, why)) => departs(why),
        (true, _) => match undo::probe_member(probe, enterprise, user_name).await {
            Ok(Some((_, now))) if now == after => documented(""),
            Ok(Some((_, now))) => departs(format!(
                "the edit answered success, the list then shows name {:?}",
                now.name
            )),
            Ok(None) => departs("the edited employee is no longer listed"),
            Err(why) => not_run(format!("the list could not be read: {why}")),
        },
        (false, (outcome::Verdict::AsDocumented, why)) => {
            not_run(format!("the edit was refused: {why}"))
        }
        (false, other) => other,
    };
    if let Some(left) = undo_now(probe, ledger, seq).await? {
        return Ok(left);
    }
    if verdict.0 == outcome::Verdict::AsDocumented {
        match undo::probe_member(probe, enterprise, user_name).await {
            Ok(Some((_, now))) if now == before => {}
            Ok(other) => {
                verdict = departs(format!(
                    "set back to the values read before, the list then shows {:?}",
                    other.map(|(_, f)| f)
                ))
            }
            Err(why) => {
                verdict = not_run(format!("the list could not be read after the undo: {why}"))
            }
        }
    }
    Ok(verdict)
}

/// Asset numbers as documented: 10 digits, one region marker (8 or 6), the rest
/// increasing. Asks for three, which are never given back.
pub async fn shell_numbers(probe: &Probe<'_>, ledger: &mut Ledger) -> Result<Judged, CliError> {
    let seq = match announce(
        probe,
        ledger,
        Write::Irreversible {
            operation: "allocateShellNums".into(),
        },
    )? {
        Ok(seq) => seq,
        Err(judged) => return Ok(judged),
    };
    let spec = probe.spec(Service::Order);
    let op = spec.op("allocateShellNums").expect("checked by the plan");
    let request = probe
        .request(
            spec,
            op,
            &[],
            Some(json!({"size": 3}).to_string().into_bytes()),
        )
        .map_err(CliError::usage)?;
    let answer = probe.send(&request).await;
    let json = outcome::envelope(spec, &op.reply, &answer);
    let ok = json.as_ref().is_ok_and(outcome::success);
    ledger.append(Record::Written {
        seq,
        result: written(&answer, ok).into(),
        member: None,
    })?;
    ledger.append(Record::Undone {
        seq,
        result: "cannot be undone".into(),
    })?;
    let json = match json {
        Ok(json) if ok => json,
        _ => return Ok(outcome::processed(spec, op, &answer)),
    };
    let numbers: Vec<&str> = json
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    Ok(shell_judgement(&numbers))
}

/// The document's rules of a list of asset numbers handed out together.
pub fn shell_judgement(numbers: &[&str]) -> Judged {
    if numbers.len() != 3 {
        return departs(format!("{} numbers for a size of 3", numbers.len()));
    }
    for n in numbers {
        if n.len() != 10 || !n.bytes().all(|b| b.is_ascii_digit()) {
            return departs(format!("`{n}` is not a string of exactly 10 digits"));
        }
        if !n.starts_with(['8', '6']) {
            return departs(format!("`{n}` starts with no region marker (8 or 6)"));
        }
    }
    let rest: Vec<u64> = numbers.iter().filter_map(|n| n[1..].parse().ok()).collect();
    if rest.windows(2).any(|w| w[0] >= w[1]) {
        return departs(format!("the sequences of {numbers:?} do not increase"));
    }
    documented("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_numbers_are_judged_by_the_documents_rules() {
        let ok = ["8000000001", "8000000002", "8000000005"];
        assert_eq!(shell_judgement(&ok).0, outcome::Verdict::AsDocumented);
        for bad in [
            ["8000000001", "8000000002", "800000003"],
            ["8000000001", "7000000002", "8000000003"],
            ["8000000002", "8000000001", "8000000003"],
            ["8000000001", "80000000a2", "8000000003"],
        ] {
            assert_eq!(
                shell_judgement(&bad).0,
                outcome::Verdict::Departs,
                "{bad:?}"
            );
        }
        assert_eq!(shell_judgement(&ok[..2]).0, outcome::Verdict::Departs);
    }
}
