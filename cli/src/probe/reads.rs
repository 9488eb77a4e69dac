//! The default tier: reads, and refusals that cannot write (GETs a conforming platform
//! refuses, which would not write even if it did not). A refusal answered as a success
//! stops the refusal checks: a deployment that accepts what the documents say it refuses
//! is sent nothing more it should refuse.

use serde_json::Value;

use super::{
    context::Probe,
    http::Answer,
    outcome::{self, Judged, departs, documented, not_run},
    plan::{Check, Kind, Spec},
};

/// Runs a read or refusal check. `Err` carries the judgement of a refusal that was
/// accepted: the caller stops the refusal tier.
pub async fn run(probe: &mut Probe<'_>, check: &Check) -> Result<Judged, Judged> {
    let spec = probe.spec(check.service);
    let Some(op) = spec.op(&check.operation) else {
        return Ok(not_run(format!(
            "no operation {} in {}",
            check.operation, spec.file
        )));
    };
    let base = match probe.request(spec, op, &[], None) {
        Ok(request) => request,
        Err(why) => return Ok(not_run(why)),
    };
    match &check.kind {
        Kind::Reply => {
            let answer = probe.send(&base).await;
            if let Answer::Reply(reply) = &answer
                && let Some(json) = reply.json()
            {
                probe.learn(&json);
            }
            Ok(outcome::processed(spec, op, &answer))
        }
        Kind::ContentTypeNotRequired => {
            let mut request = base;
            request
                .headers
                .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
            Ok(outcome::processed(spec, op, &probe.send(&request).await))
        }
        Kind::Paging => Ok(paging(probe, spec, op).await),
        Kind::ContentTypeRequired => {
            let mut request = base;
            request
                .headers
                .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
            outcome::refused(spec, op, &probe.send(&request).await, None)
        }
        Kind::NonceMissing => {
            let mut request = base;
            request.query.retain(|(k, _)| k != "g_nonce");
            outcome::refused(spec, op, &probe.send(&request).await, None)
        }
        Kind::NonceReplayed => {
            let first = probe.send(&base).await;
            match outcome::envelope(spec, &op.reply, &first) {
                Ok(json) if outcome::success(&json) => {}
                Ok(json) => {
                    return Ok(not_run(format!(
                        "the first request, whose g_nonce the second repeats, was refused with {}",
                        outcome::code(&json).unwrap_or_default()
                    )));
                }
                Err((_, why)) => {
                    return Ok(not_run(format!(
                        "the first request, whose g_nonce the second repeats: {why}"
                    )));
                }
            }
            outcome::refused(spec, op, &probe.send(&base).await, None)
        }
        Kind::Credential {
            credential,
            missing,
            code,
        } => {
            let mut request = base;
            let header = credential.header.to_ascii_lowercase();
            if *missing {
                request
                    .headers
                    .retain(|(k, _)| k.to_ascii_lowercase() != header);
            } else {
                let wrong = format!("probe-wrong-{}", licensing_sdk::runtime::nonce());
                // Both copies of the member center's application token are wrong
                // together: which code a mismatch between them answers is not shown.
                let both = code.is_some() && header == "clienttoken";
                for (name, value) in &mut request.headers {
                    let name = name.to_ascii_lowercase();
                    if name == header || (both && name == "authorization") {
                        *value = if name == "authorization" {
                            format!("Bearer {wrong}")
                        } else {
                            wrong.clone()
                        };
                    }
                }
            }
            outcome::refused(spec, op, &probe.send(&request).await, *code)
        }
        other => Ok(not_run(format!("{other:?} is not a read"))),
    }
}

/// Two pages of size 1: each says the page and size asked, counts its items, and the
/// first says whether there is a next one; the second holds another item.
async fn paging(probe: &Probe<'_>, spec: &Spec, op: &licensing_spec::Op) -> Judged {
    let Some(paging) = &op.pagination else {
        return not_run("the operation does not page");
    };
    let page = |n: u32| {
        probe.request(
            spec,
            op,
            &[
                (paging.page_param.as_str(), n.to_string()),
                (paging.size_param.as_str(), "1".to_string()),
            ],
            None,
        )
    };
    let first = match page(1) {
        Ok(request) => request,
        Err(why) => return not_run(why),
    };
    let one = match read_page(spec, op, &probe.send(&first).await, 1) {
        Ok(page) => page,
        Err(judged) => return judged,
    };
    let total = one.get("total").and_then(Value::as_i64);
    let has_next = one.get(&paging.has_next).and_then(Value::as_bool);
    if let (Some(total), Some(next)) = (total, has_next)
        && next != (total > 1)
    {
        return departs(format!(
            "page 1 of size 1 of {total} items says {}={next}",
            paging.has_next
        ));
    }
    if total.is_none_or(|t| t < 2) {
        return documented("one item or none: a second page was not asked");
    }
    let second = match page(2) {
        Ok(request) => request,
        Err(why) => return not_run(why),
    };
    let two = match read_page(spec, op, &probe.send(&second).await, 2) {
        Ok(page) => page,
        Err(judged) => return judged,
    };
    let item = |page: &Value| page.get(&paging.items).and_then(|l| l.get(0)).cloned();
    if item(&one) == item(&two) {
        return departs("pages 1 and 2 of size 1 hold the same item");
    }
    documented("")
}

/// A page's `data`, checked for what every page says: the page number and size asked,
/// `size` the count of its items, no more items than the size.
fn read_page(
    spec: &Spec,
    op: &licensing_spec::Op,
    answer: &Answer,
    n: i64,
) -> Result<Value, Judged> {
    let json = outcome::envelope(spec, &op.reply, answer)?;
    if !outcome::success(&json) {
        return Err(not_run(format!(
            "page {n} was refused with {}",
            outcome::code(&json).unwrap_or_default()
        )));
    }
    let data = json.get("data").cloned().unwrap_or(Value::Null);
    let paging = op.pagination.as_ref().expect("a paged operation");
    let items = data
        .get(&paging.items)
        .and_then(Value::as_array)
        .map_or(0, Vec::len) as i64;
    let field = |name: &str| data.get(name).and_then(Value::as_i64);
    let mut wrong = Vec::new();
    if field("pageNum") != Some(n) {
        wrong.push(format!("pageNum is {:?}, not {n}", field("pageNum")));
    }
    if field("pageSize") != Some(1) {
        wrong.push(format!("pageSize is {:?}, not 1", field("pageSize")));
    }
    if field("size") != Some(items) {
        wrong.push(format!("size is {:?} for {items} items", field("size")));
    }
    if items > 1 {
        wrong.push(format!("{items} items on a page of size 1"));
    }
    if wrong.is_empty() {
        Ok(data)
    } else {
        Err(departs(format!("page {n} of size 1: {}", wrong.join("; "))))
    }
}
