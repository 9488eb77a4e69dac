//! The plan: every check the probe makes, named, each with the documented sentence or the
//! spec pointer it tests. The operations, their parameters, reply schemas, paging,
//! credentials and error codes come from the specs through the spec model; the sentences
//! are the platform documents' own words, quoted where a check rests on them.

use licensing_sdk::operations::Service;
use licensing_spec::Op;
use serde::Serialize;

pub use super::spec::{Credential, Place, Source, Spec};
use super::{quotes, spec::refusal_target};

/// How far a check may go: the first is the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Reads: GETs with valid credentials.
    Read,
    /// Requests a conforming platform refuses, GETs that would not write even if it did not.
    Refusal,
    /// Reversible writes on allow-listed ids, each undone (`--writes`).
    Write,
    /// Writes that cannot be taken back (`--irreversible`, against a simulator only).
    Irreversible,
}

impl Tier {
    /// The tier's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Refusal => "refusal",
            Tier::Write => "write",
            Tier::Irreversible => "irreversible",
        }
    }
}

/// What a check does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Kind {
    /// The read answers HTTP 200 with a reply its schema allows.
    Reply,
    /// Two pages of a paged read, as its `x-pagination` says.
    Paging,
    /// A credential wrong (or left out) is refused, with `code` when the documents give one.
    Credential {
        credential: Credential,
        missing: bool,
        code: Option<&'static str>,
    },
    /// A `g_nonce` used once is refused the second time.
    NonceReplayed,
    /// A request without `g_nonce` is refused.
    NonceMissing,
    /// An order service GET without `Content-Type` is refused.
    ContentTypeRequired,
    /// A member center GET without `Content-Type` is processed.
    ContentTypeNotRequired,
    /// An allow-listed lock read as enabled is disabled, read back, enabled again.
    LockRoundTrip,
    /// A lock number no enterprise has answers status 2.
    UnknownLock,
    /// A probe employee is added to an allow-listed enterprise, found, and deleted.
    MemberAddDelete,
    /// The probe employee's name is edited, read back, and set back.
    MemberEditRestore,
    /// Asset numbers are handed out as the document describes them.
    ShellNumbers,
}

/// One check of the plan.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// Its name, stable from run to run: `listMembers.reply`, `member.nonce.replayed`.
    pub id: String,
    pub tier: Tier,
    #[serde(serialize_with = "service_name")]
    pub service: Service,
    /// The `operationId` its requests go to.
    pub operation: String,
    /// What it asks, in a line.
    pub title: String,
    /// What it tests.
    pub sources: Vec<Source>,
    #[serde(flatten)]
    pub kind: Kind,
}

fn service_name<S: serde::Serializer>(service: &Service, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(service_str(*service))
}

/// A service's name in check ids and reports.
pub fn service_str(service: Service) -> &'static str {
    match service {
        Service::Order => "order",
        Service::Member => "member",
    }
}

/// The whole plan, in the order it runs: each service's reads, then its refusals, then
/// the writes, then the irreversible checks.
pub fn plan(specs: &[Spec]) -> Result<Vec<Check>, String> {
    let mut checks = Vec::new();
    for spec in specs {
        reads(spec, &mut checks);
    }
    for spec in specs {
        refusals(spec, &mut checks)?;
    }
    for spec in specs {
        writes(spec, &mut checks)?;
    }
    Ok(checks)
}

fn check(spec: &Spec, op: &Op, id: String, tier: Tier, title: String, kind: Kind) -> Check {
    Check {
        id,
        tier,
        service: spec.service,
        operation: op.id.clone(),
        title,
        sources: Vec::new(),
        kind,
    }
}

fn reads(spec: &Spec, checks: &mut Vec<Check>) {
    let q = quotes::of(spec.service);
    for op in spec.ops.iter().filter(|o| o.method == "GET") {
        let mut reply = check(
            spec,
            op,
            format!("{}.reply", op.id),
            Tier::Read,
            format!("{} answers HTTP 200 with a reply its schema allows", op.id),
            Kind::Reply,
        );
        reply.sources = vec![
            q.status.into(),
            q.success.into(),
            spec.pointer(op, "/responses/200"),
            spec.component("schemas", &op.reply),
        ];
        checks.push(reply);
        if op.pagination.is_some() {
            let mut paging = check(
                spec,
                op,
                format!("{}.paging", op.id),
                Tier::Read,
                format!(
                    "{} pages as documented: page number, page size, items per page, next page",
                    op.id
                ),
                Kind::Paging,
            );
            paging.sources = vec![
                quotes::PAGE_QUERY.into(),
                quotes::PAGE_SIZE_FIELD.into(),
                spec.pointer(op, "/x-pagination"),
            ];
            checks.push(paging);
        }
    }
}

fn refusals(spec: &Spec, checks: &mut Vec<Check>) -> Result<(), String> {
    let q = quotes::of(spec.service);
    let service = service_str(spec.service);
    let target = refusal_target(spec)
        .ok_or_else(|| format!("{}: no GET to send the refusal checks as", spec.file))?;
    let refused = vec![q.status.into(), q.error_shape.into()];
    for credential in spec.credentials(target) {
        for missing in [false, true] {
            let code = if missing {
                None
            } else {
                quotes::credential_code(spec.service, &credential.header)
            };
            let what = if missing { "missing" } else { "wrong" };
            let mut c = check(
                spec,
                target,
                format!(
                    "{service}.auth.{}-{what}",
                    credential.header.to_ascii_lowercase()
                ),
                Tier::Refusal,
                format!(
                    "a {what} `{}` is refused{}",
                    credential.header,
                    code.map_or_else(String::new, |c| format!(" with code {c}"))
                ),
                Kind::Credential {
                    credential: credential.clone(),
                    missing,
                    code,
                },
            );
            c.sources = refused.clone();
            c.sources.push(q.auth.into());
            if let Some(code_quote) = code.and_then(quotes::code_row) {
                c.sources.push(code_quote.into());
            }
            c.sources
                .push(spec.component("securitySchemes", &credential.scheme));
            checks.push(c);
        }
    }
    let nonce = spec.component("parameters", "GNonce");
    for (name, kind, title) in [
        (
            "replayed",
            Kind::NonceReplayed,
            "a g_nonce used once is refused the second time",
        ),
        (
            "missing",
            Kind::NonceMissing,
            "a request without g_nonce is refused",
        ),
    ] {
        let mut c = check(
            spec,
            target,
            format!("{service}.nonce.{name}"),
            Tier::Refusal,
            title.to_string(),
            kind,
        );
        c.sources = refused.clone();
        c.sources.push(q.nonce.into());
        c.sources.push(nonce.clone());
        checks.push(c);
    }
    match spec.service {
        Service::Order => {
            for op in spec.ops.iter().filter(|o| o.method == "GET") {
                let mut c = check(
                    spec,
                    op,
                    format!("{}.content-type-required", op.id),
                    Tier::Refusal,
                    format!("{} without Content-Type is refused", op.id),
                    Kind::ContentTypeRequired,
                );
                c.sources = refused.clone();
                c.sources.push(quotes::ORDER_CONTENT_TYPE.into());
                checks.push(c);
            }
        }
        Service::Member => {
            let mut c = check(
                spec,
                target,
                format!("{}.content-type-not-required", target.id),
                Tier::Read,
                format!("{} (no body) without Content-Type is processed", target.id),
                Kind::ContentTypeNotRequired,
            );
            c.sources = vec![quotes::MEMBER_CONTENT_TYPE.into(), q.success.into()];
            checks.push(c);
        }
    }
    Ok(())
}

/// The operation `id`, which the writes need: a spec without it is a spec the probe was
/// not written for.
fn needed<'s>(spec: &'s Spec, id: &str) -> Result<&'s Op, String> {
    spec.op(id)
        .ok_or_else(|| format!("{}: no operation `{id}`", spec.file))
}

fn writes(spec: &Spec, checks: &mut Vec<Check>) -> Result<(), String> {
    match spec.service {
        Service::Order => {
            let disable = needed(spec, "disableLocks")?;
            let enable = needed(spec, "enableLocks")?;
            let mut round = check(
                spec,
                disable,
                "order.lock.round-trip".into(),
                Tier::Write,
                "an allow-listed lock read as enabled is disabled (status 1), read back, and enabled again"
                    .into(),
                Kind::LockRoundTrip,
            );
            round.sources = vec![
                quotes::LOCK_TRANSITIONS.into(),
                quotes::LOCK_STATUSES.into(),
                quotes::ASSET_LOCKED.into(),
                spec.pointer(disable, ""),
                spec.pointer(enable, ""),
            ];
            checks.push(round);
            let mut unknown = check(
                spec,
                disable,
                "order.lock.unknown-status-2".into(),
                Tier::Write,
                "disabling a lock number no enterprise has answers item status 2".into(),
                Kind::UnknownLock,
            );
            unknown.sources = vec![
                quotes::LOCK_NOT_FOUND.into(),
                spec.component("schemas", "LockStatus"),
            ];
            checks.push(unknown);
            let shell = needed(spec, "allocateShellNums")?;
            let mut numbers = check(
                spec,
                shell,
                "order.shellnums.digits".into(),
                Tier::Irreversible,
                "asset numbers are 10 digits, a region marker then an increasing sequence".into(),
                Kind::ShellNumbers,
            );
            numbers.sources = vec![
                quotes::SHELL_NUMBERS.into(),
                spec.component("schemas", "ShellNumber"),
            ];
            checks.push(numbers);
        }
        Service::Member => {
            let add = needed(spec, "addMembers")?;
            let delete = needed(spec, "deleteMember")?;
            let edit = needed(spec, "editMember")?;
            let mut added = check(
                spec,
                add,
                "member.employee.add-delete".into(),
                Tier::Write,
                "a probe employee added to an allow-listed enterprise is listed, then deleted"
                    .into(),
                Kind::MemberAddDelete,
            );
            added.sources = vec![
                quotes::MEMBER_ADD.into(),
                quotes::MEMBER_ADD_REPLY.into(),
                quotes::MEMBER_DELETE.into(),
                spec.pointer(add, ""),
                spec.pointer(delete, ""),
            ];
            checks.push(added);
            let mut edited = check(
                spec,
                edit,
                "member.employee.edit-restore".into(),
                Tier::Write,
                "the probe employee's name is edited, read back, and set back".into(),
                Kind::MemberEditRestore,
            );
            edited.sources = vec![quotes::MEMBER_EDIT.into(), spec.pointer(edit, "")];
            checks.push(edited);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_covers_every_read_of_the_specs_and_cites_each_check() {
        let specs = Spec::both().unwrap();
        let plan = plan(&specs).unwrap();
        let gets: Vec<&str> = specs
            .iter()
            .flat_map(|s| s.ops.iter())
            .filter(|o| o.method == "GET")
            .map(|o| o.id.as_str())
            .collect();
        assert!(gets.len() >= 6, "{gets:?}");
        for get in &gets {
            assert!(
                plan.iter().any(|c| c.id == format!("{get}.reply")),
                "{get} has no reply check"
            );
        }
        assert!(plan.iter().any(|c| c.id == "listMembers.paging"));
        let mut ids: Vec<&str> = plan.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), plan.len(), "check ids are unique");
        for c in &plan {
            assert!(!c.sources.is_empty(), "{} cites nothing", c.id);
            // A read or refusal never goes to an operation that writes.
            if c.tier <= Tier::Refusal {
                let op = specs
                    .iter()
                    .find_map(|s| s.op(&c.operation))
                    .expect("an operation of the specs");
                assert_eq!(op.method, "GET", "{}", c.id);
            }
        }
        // The credentials come from the security requirements: one bearer for the order
        // service, three headers for the member center.
        let auth = |service: &str| {
            plan.iter()
                .filter(|c| c.id.starts_with(&format!("{service}.auth.")))
                .count()
        };
        assert_eq!((auth("order"), auth("member")), (2, 6));
        let user = plan
            .iter()
            .find(|c| c.id == "member.auth.usertoken-wrong")
            .unwrap();
        assert!(matches!(
            user.kind,
            Kind::Credential {
                code: Some("60005"),
                ..
            }
        ));
    }

    #[test]
    fn spec_pointers_lead_somewhere_in_their_spec() {
        let specs = Spec::both().unwrap();
        for c in plan(&specs).unwrap() {
            for source in &c.sources {
                let Source::Spec { spec, pointer } = source else {
                    continue;
                };
                let text = if *spec == "spec/order.yaml" {
                    Service::Order.openapi()
                } else {
                    Service::Member.openapi()
                };
                let raw = licensing_spec::raw(text).unwrap();
                assert!(
                    raw.pointer(pointer.trim_start_matches('#')).is_some(),
                    "{}: {spec}{pointer} leads nowhere",
                    c.id
                );
            }
        }
    }
}
