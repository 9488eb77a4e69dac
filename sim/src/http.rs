//! The protocol every operation shares: the reply envelope, reading requests without
//! ever answering outside it, authentication, `g_nonce` replay protection and fault
//! injection.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState},
    sync::PoisonError,
    time::{Duration, Instant},
};

use axum::{
    body::{Body, Bytes},
    http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts},
    response::Response,
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};

use super::{
    Config, Shared,
    admin::types::FaultKind,
    faults::Faults,
    routes::{PathParams, Route},
    sandbox::{journal::Exchange, rules::Subject},
    server::{BodyUnread, ReadBody},
};
use licensing_sdk::{
    ErrorCode, ReplyCode, member::types as m, operations, operations::Operation, order::types as o,
};

/// The status of every business exception.
pub(crate) fn business_exception() -> StatusCode {
    StatusCode::from_u16(299).expect("299 is a valid status code")
}

/// A business error: answered with HTTP 299 and `{code, message, cause}`.
#[derive(Debug)]
pub(crate) struct Failure {
    pub code: ErrorCode,
    pub message: String,
    pub cause: String,
    /// The `data` of an `addMembers` partial failure (`60027`).
    pub partial: Option<m::AddMembersResult>,
}

impl Failure {
    /// A failure with the code's standard message.
    pub fn new(code: ErrorCode, cause: impl Into<String>) -> Self {
        let cause = cause.into();
        let message = match code {
            // The document says this code's message carries the detail.
            ErrorCode::ParameterValidationFailed => {
                format!("parameter validation failure: {cause}")
            }
            _ => standard_message(&code).to_string(),
        };
        Self::with_message(code, message, cause)
    }

    /// A failure whose message fills in placeholders (`50003`, `60009`).
    pub fn with_message(
        code: ErrorCode,
        message: impl Into<String>,
        cause: impl Into<String>,
    ) -> Self {
        Self {
            code,
            message: message.into(),
            cause: cause.into(),
            partial: None,
        }
    }
}

/// The documents give messages by meaning; these are the simulator's wording.
fn standard_message(code: &ErrorCode) -> &'static str {
    use ErrorCode as E;
    match code {
        E::ParameterValidationFailed => "parameter validation failure",
        E::NetworkException => "network exception, retry",
        E::ApplicationTokenInvalid => {
            "application token invalid, expired or lacking resource permission"
        }
        E::UserTokenInvalid => "invalid user login token",
        E::SecurityCheckFailed => "security check failed",
        E::UserCenterException => "user center exception",
        E::UserNotFound => "user not found",
        E::ParameterEmpty => "parameter empty",
        E::EmployeeListEmpty => "employee list empty",
        E::TooManyEmployees => "upload count exceeds the maximum of 100",
        E::AccountEmpty => "account empty",
        E::PasswordEmpty => "password empty",
        E::GroupIdEmpty => "group id empty",
        E::NameEmpty => "name empty",
        E::PasswordLength => "password length out of range",
        E::NameTooLong => "name too long",
        E::RemarkTooLong => "remark too long",
        E::AccountNotAlphanumeric => "account may contain only letters and digits",
        E::InvalidMobileNumber => "invalid mobile number",
        E::EnterpriseSuffixEmpty => "enterprise suffix empty",
        E::TrialMemberLimit => "trial member account limit reached",
        E::PartialAddFailure => "some employees failed to be added",
        E::NotBoundToLicensingCustomer => "current account is not bound to a licensing customer",
        E::AssetNumberNotFound => "asset number not found",
        E::MultipleEmployeesMatched => "enterprise sub-account matched several employees",
        E::AssetNumberWrongCustomer => "asset number belongs to the wrong customer",
        E::NoEmployeeMatched => "enterprise sub-account matched no employee",
        E::AssetNumberConfiguredTwice => "asset number configured twice",
        E::InsufficientNodes => "insufficient nodes",
        E::EmployeeLacksPermission => "employee lacks permission",
        E::AlreadyLent => "already lent to another lent lock",
        E::LentLockStateAbnormal => "lent lock state abnormal",
        E::LentLockLentToAnotherEmployee => "lent lock already lent to another employee",
        E::LendRequestFailed => "lend request failed",
        E::Other(_) => "error",
    }
}

/// A generated reply envelope, built from an operation's result.
pub(crate) trait Reply: Serialize {
    /// The operation's `data`.
    type Data;
    /// `code: 0`, `message: "success"` and the data.
    fn success(data: Self::Data) -> Self;
    /// The string code, message and cause.
    fn failure(failure: Failure) -> Self;
}

/// Implements [`Reply`] for the generated envelopes, by the shape of their `data` field: a
/// success carries it (an empty list is `data: []`); a failure has none.
macro_rules! replies {
    (@data option, $data:expr) => { Some($data) };
    (@data null, $data:expr) => {{ let () = $data; Some(Value::Null) }};
    (@none option) => { None };
    (@none null) => { None };
    ($($reply:ty => $shape:ident $data:ty;)*) => {$(
        impl Reply for $reply {
            type Data = $data;
            fn success(value: Self::Data) -> Self {
                Self {
                    code: ReplyCode::SUCCESS,
                    message: "success".to_string(),
                    data: replies!(@data $shape, value),
                    cause: None,
                }
            }
            fn failure(failure: Failure) -> Self {
                Self {
                    code: failure.code.into(),
                    message: failure.message,
                    data: replies!(@none $shape),
                    cause: Some(failure.cause),
                }
            }
        }
    )*};
}

replies! {
    o::BindEnterpriseReply => option o::EnterpriseCustomer;
    o::CreateEnterpriseReply => option o::CreateEnterpriseResult;
    o::QueryEnterpriseReply => option Vec<o::EnterpriseCustomer>;
    o::BatchOrderReply => option Vec<o::BatchOrderResultItem>;
    o::DisableLocksReply => option Vec<o::LockResultItem>;
    o::EnableLocksReply => option Vec<o::LockResultItem>;
    o::ListVirtualAssetsReply => option Vec<o::VirtualAsset>;
    o::AllocateShellNumsReply => option Vec<o::ShellNumber>;
    m::EditMemberReply => null ();
    m::ResetMemberPasswordReply => null ();
    m::DeleteMemberReply => null ();
    m::ListMembersReply => option m::MemberPage;
    m::ListAssetNumsReply => option Vec<m::EnterpriseAsset>;
    m::ListAssetProductsReply => option m::AssetProducts;
    m::ListLentLocksReply => option Vec<m::LentLock>;
    m::ConfigureMemberAssetsReply => null ();
    m::LendAssetsReply => null ();
}

/// The update reply carries no `data` at all.
impl Reply for o::UpdateEnterpriseReply {
    type Data = ();
    fn success((): ()) -> Self {
        Self {
            code: ReplyCode::SUCCESS,
            message: "success".to_string(),
            cause: None,
        }
    }
    fn failure(failure: Failure) -> Self {
        Self {
            code: failure.code.into(),
            message: failure.message,
            cause: Some(failure.cause),
        }
    }
}

/// A partial failure (`60027`) keeps both lists in `data`.
impl Reply for m::AddMembersReply {
    type Data = m::AddMembersResult;
    fn success(data: Self::Data) -> Self {
        Self {
            code: ReplyCode::SUCCESS,
            message: "success".to_string(),
            data: Some(data),
            cause: None,
        }
    }
    fn failure(failure: Failure) -> Self {
        Self {
            code: failure.code.into(),
            message: failure.message,
            data: failure.partial,
            cause: Some(failure.cause),
        }
    }
}

/// HTTP 200 with the success envelope, or HTTP 299 with the error envelope.
///
/// Every reply goes through here, so this is where the documents are enforced: a failure
/// whose code the documents do not give for `op` is a simulator bug. Debug builds (every
/// test run) panic, which drops the connection so the caller sees an error; release builds
/// log it at error level and still answer.
pub(crate) fn respond<R: Reply>(op: &Operation, result: Result<R::Data, Failure>) -> Answer {
    match result {
        Ok(data) => Answer::json(StatusCode::OK, &R::success(data)),
        Err(failure) => {
            if !op.documents(failure.code.as_str()) {
                undocumented(op, &failure);
            }
            tracing::debug!(operation = op.id, code = %failure.code, cause = %failure.cause, "business exception");
            Answer::json(business_exception(), &R::failure(failure))
        }
    }
}

/// A reply as the gate handles it: the journal keeps its bytes as they are, and it
/// becomes a response once, at the end.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: StatusCode,
    /// The JSON envelope; empty for a bare status (a fault rule's).
    pub body: Bytes,
}

impl Answer {
    /// `value` as JSON.
    fn json(status: StatusCode, value: &impl Serialize) -> Self {
        // Most envelopes fit; a larger one grows the buffer as it is written.
        let mut body = Vec::with_capacity(512);
        match serde_json::to_writer(&mut body, value) {
            Ok(()) => Self {
                status,
                body: body.into(),
            },
            Err(e) => {
                tracing::error!(error = %e, "a reply could not be serialized");
                Self::status(StatusCode::INTERNAL_SERVER_ERROR)
            }
        }
    }

    /// A status and no body.
    fn status(status: StatusCode) -> Self {
        Self {
            status,
            body: Bytes::new(),
        }
    }

    fn into_response(self) -> Response {
        let json = !self.body.is_empty();
        let mut response = Response::new(Body::from(self.body));
        *response.status_mut() = self.status;
        if json {
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        response
    }
}

/// A failure code the documents do not give for the operation.
#[cfg(debug_assertions)]
fn undocumented(op: &Operation, failure: &Failure) {
    panic!(
        "simulator bug: {} answered code {}, which the documents do not list for it \
         (documented: {:?}); cause: {}",
        op.id, failure.code, op.error_codes, failure.cause
    );
}

/// A failure code the documents do not give for the operation.
#[cfg(not(debug_assertions))]
fn undocumented(op: &Operation, failure: &Failure) {
    tracing::error!(
        operation = op.id,
        code = %failure.code,
        documented = ?op.error_codes,
        cause = %failure.cause,
        "simulator bug: an error code the documents do not list for this operation"
    );
}

/// A request as the handlers see it, read by the gate. Reading it never fails: whatever
/// cannot be read is reported by the handler in the envelope, never as a bare HTTP 4xx.
#[derive(Debug)]
pub(crate) struct Call {
    path: HashMap<String, String>,
    query: Query,
    /// The header as received (a clone shares its bytes).
    content_type: Option<HeaderValue>,
    body: Result<Bytes, String>,
}

impl Call {
    /// A call made by the simulator itself (seeds): path parameters, query and a JSON body.
    pub fn internal(path: &[(&str, &str)], query: &[(&str, &str)], body: Option<&Value>) -> Self {
        Self {
            path: path
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            query: Query::from_pairs(query.iter().copied()),
            content_type: Some(HeaderValue::from_static("application/json")),
            body: Ok(body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()))),
        }
    }

    /// A call read back from the state file's log, to replay.
    pub fn recorded(
        path: HashMap<String, String>,
        query: &[(String, String)],
        content_type: Option<&str>,
        body: Result<Bytes, String>,
    ) -> Self {
        Self {
            path,
            query: Query::from_pairs(query.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
            // A recorded type was readable as text when received, so it converts back.
            content_type: content_type.and_then(|ct| HeaderValue::from_str(ct).ok()),
            body,
        }
    }

    /// The path parameters, for the state file's log (replay needs the call as the
    /// handler saw it; the credentials were checked before and are not part of it).
    pub fn path_params(&self) -> &HashMap<String, String> {
        &self.path
    }

    /// The query's parameters, in order.
    pub fn query_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.query.pairs()
    }

    /// The `Content-Type` header, if it is text.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_ref().and_then(|v| v.to_str().ok())
    }

    /// The body, or why it could not be read.
    pub fn raw_body(&self) -> Result<&Bytes, &str> {
        self.body.as_ref().map_err(String::as_str)
    }

    /// A path parameter (always present: the route matched).
    pub fn path(&self, name: &str) -> &str {
        self.path.get(name).map_or("", String::as_str)
    }

    /// The first value of a query parameter.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.get(name)
    }

    /// The raw JSON body, once its presence and media type are checked.
    fn json(&self) -> Result<&Bytes, String> {
        let body = self.body.as_ref().map_err(Clone::clone)?;
        if body.is_empty() {
            return Err("the request body is required".to_string());
        }
        let json = self.content_type().is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
        });
        if !json {
            return Err("Content-Type must be application/json".to_string());
        }
        Ok(body)
    }

    /// The body as a JSON object; the error says what is wrong with it.
    pub fn object(&self) -> Result<Map<String, Value>, String> {
        match serde_json::from_slice(self.json()?) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("the request body must be a JSON object".to_string()),
            Err(e) => Err(format!("the request body is not valid JSON: {e}")),
        }
    }

    /// The body as a generated request type, checked as strictly as the spec's schema.
    pub fn body<T: DeserializeOwned>(&self) -> Result<T, String> {
        // Straight into the typed request: one pass over large batches. Only a failure
        // takes the slower way through `Value`, whose errors say what is wrong.
        let json = self.json()?;
        let error = match serde_json::from_slice(json) {
            Ok(typed) => return Ok(typed),
            Err(e) => e,
        };
        // Finding the path parses the body a few times per level: bounded to bodies whose
        // trees stay small; a larger one gets serde's message with its line and column.
        if json.len() > MAX_LOCATED_BODY {
            return Err(format!(
                "the request body does not match the schema: {error}"
            ));
        }
        let object = self.object()?;
        match serde_json::from_value::<T>(Value::Object(object.clone())) {
            Ok(typed) => Ok(typed),
            Err(e) => Err(name_the_field::<T>(&object, &e)),
        }
    }
}

/// Bodies up to this size get their error's field path ([`name_the_field`]).
const MAX_LOCATED_BODY: usize = 4 * 1024 * 1024;

/// The error of reading `object` as `T`, prefixed with the path of the field it is about
/// (`orderList[3].assets[0].products[1].productUri: invalid type: ...`).
///
/// serde's errors name a missing or unknown field but not where it is, nor the field of a
/// wrong type. The derived deserializers read fields in the object's order and stop at the
/// first bad one, reporting missing fields only at the end, so the path is found by
/// reading smaller documents: in an object, the shortest prefix of its fields (scalars
/// first) that fails for another reason than a missing field ends with the culprit; in an array, the
/// shortest failing prefix of its items ends with it (found by bisection); an object
/// whose own fields are all fine is blamed on the list inside it that, emptied, stops the
/// failure. This runs only for a body that failed, and parses it a few times per level.
fn name_the_field<T: DeserializeOwned>(
    object: &Map<String, Value>,
    error: &serde_json::Error,
) -> String {
    match locate::<T>(object, error) {
        (Some(path), message) => format!("{path}: {message}"),
        (None, message) => message,
    }
}

/// [`name_the_field`]'s path (`None` for the document itself) and serde's message.
pub(crate) fn locate<T: DeserializeOwned>(
    object: &Map<String, Value>,
    error: &serde_json::Error,
) -> (Option<String>, String) {
    let fails = |doc: &Value| {
        serde_json::from_value::<T>(doc.clone())
            .err()
            .map(|e| e.to_string())
    };
    let mut doc = Value::Object(object.clone());
    let mut path: Vec<Step> = Vec::new();
    let mut message = error.to_string();
    while let Some(node) = at(&mut doc, &path) {
        let step = match node.clone() {
            Value::Array(items) if !items.is_empty() => {
                // What the document says without any item: a failure that is not this.
                *at(&mut doc, &path).expect("the node exists") = Value::Array(Vec::new());
                let baseline = fails(&doc);
                if baseline.as_ref() == Some(&message) {
                    // Not about an item: the list itself (an unknown field, say).
                    *at(&mut doc, &path).expect("the node exists") = Value::Array(items);
                    break;
                }
                let (mut lo, mut hi) = (1, items.len());
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    *at(&mut doc, &path).expect("the node exists") =
                        Value::Array(items[..mid].to_vec());
                    if fails(&doc).is_some_and(|e| Some(&e) != baseline.as_ref()) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                *at(&mut doc, &path).expect("the node exists") = Value::Array(items[..lo].to_vec());
                Some(Step::Index(lo - 1))
            }
            Value::Object(full) => culprit(&mut doc, &path, &full, &message, &fails),
            _ => None,
        };
        let Some(step) = step else { break };
        path.push(step);
        if let Some(m) = fails(&doc) {
            message = m;
        }
    }
    if path.is_empty() {
        return (None, message);
    }
    let mut at_path = String::new();
    for step in &path {
        match step {
            Step::Key(k) if at_path.is_empty() => at_path.push_str(k),
            Step::Key(k) => {
                at_path.push('.');
                at_path.push_str(k);
            }
            Step::Index(i) => at_path.push_str(&format!("[{i}]")),
        }
    }
    (Some(at_path), message)
}

/// One step of a path into a JSON document.
enum Step {
    Key(String),
    Index(usize),
}

fn at<'v>(doc: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(doc, |node, step| match step {
        Step::Key(k) => node.get_mut(k.as_str()),
        Step::Index(i) => node.get_mut(*i),
    })
}

/// The field of the object at `path` that the failure is about, leaving `doc` failing
/// with that field last (see [`name_the_field`]); `None` when it is the object itself.
fn culprit(
    doc: &mut Value,
    path: &[Step],
    full: &Map<String, Value>,
    message: &str,
    fails: &impl Fn(&Value) -> Option<String>,
) -> Option<Step> {
    // Scalars first: a discriminator (`orderType`) must be present before the fields it
    // selects can fail, and a scalar is never itself blamed for a field inside a list.
    let (scalars, containers): (Vec<_>, Vec<_>) = full
        .iter()
        .partition(|(_, v)| !matches!(v, Value::Array(_) | Value::Object(_)));
    *at(doc, path)? = Value::Object(Map::new());
    let outside = fails(doc).is_some_and(|e| e == message);
    *at(doc, path)? = Value::Object(full.clone());
    if outside {
        return None;
    }
    let mut prefix = Map::new();
    for (key, value) in scalars.into_iter().chain(containers) {
        prefix.insert(key.clone(), value.clone());
        *at(doc, path)? = Value::Object(prefix.clone());
        if fails(doc).is_some_and(|e| !e.starts_with("missing field")) {
            // The whole object again: the fields after the culprit are read after it, so
            // it still fails first, and no missing field of a prefix blurs what follows.
            *at(doc, path)? = Value::Object(full.clone());
            return Some(Step::Key(key.clone()));
        }
    }
    *at(doc, path)? = Value::Object(full.clone());
    for (key, value) in full {
        if !matches!(value, Value::Array(items) if !items.is_empty()) {
            continue;
        }
        *at(doc, path)?.get_mut(key.as_str())? = Value::Array(Vec::new());
        let still = fails(doc).is_some_and(|e| e == message);
        *at(doc, path)?.get_mut(key.as_str())? = value.clone();
        if !still {
            return Some(Step::Key(key.clone()));
        }
    }
    None
}

/// Which service a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Service {
    Order,
    Member,
}

impl From<operations::Service> for Service {
    fn from(service: operations::Service) -> Self {
        match service {
            operations::Service::Order => Service::Order,
            operations::Service::Member => Service::Member,
        }
    }
}

impl Service {
    /// The code for a malformed or incomplete request: the order service documents
    /// `13004` for every validation failure, the member center only "parameter empty".
    pub fn invalid(self, cause: impl Into<String>) -> Failure {
        match self {
            Service::Order => Failure::new(ErrorCode::ParameterValidationFailed, cause),
            Service::Member => Failure::new(ErrorCode::ParameterEmpty, cause),
        }
    }
}

/// A path parameter that is not valid UTF-8 once percent-decoded.
#[derive(Debug)]
pub(crate) struct InvalidPath;

/// Every request to an operation passes here: the checks every operation shares
/// (latency, credentials, `g_nonce`, injected faults, scripted fault rules), then the
/// operation, then the journal. A failed check is answered with the operation's own reply
/// type and a documented code. The path, the query and the body are read once (the path
/// by the caller, which found the route; the body by the server, within its budget, or
/// why it could not be, which the operation answers) and handed to the operation as a
/// [`Call`].
pub(crate) async fn gate(
    route: &Route,
    path: PathParams,
    parts: Parts,
    body: ReadBody,
) -> Response {
    let started = Instant::now();
    let shared = &route.shared;
    let time = shared.clock.now_ms();
    let body = body.map_err(|e| format!("Failed to buffer the request body: {e}"));
    // Shared with the journal only when it keeps anything (a clone of received bytes
    // allocates once).
    let kept = shared
        .journal
        .enabled()
        .then(|| body.as_ref().ok().cloned())
        .flatten();
    let (answer, fault, effect) = checks(route, path, &parts, body).await;
    if shared.journal.enabled() {
        let dropped = matches!(effect, Some(Effect::Drop));
        shared.journal.push(Exchange {
            time,
            operation: route.op.id,
            method: parts.method,
            target: parts
                .uri
                .path_and_query()
                .map_or_else(|| parts.uri.path(), |pq| pq.as_str())
                .into(),
            request_body: kept.unwrap_or_default(),
            reply: (!dropped).then(|| (answer.status, answer.body.clone())),
            fault,
            duration: started.elapsed(),
        });
    }
    let response = answer.into_response();
    match effect {
        None => response,
        Some(effect) => effect.apply(response).await,
    }
}

/// Appends `raw` decoded as one name or value of `application/x-www-form-urlencoded`: `+`
/// is a space, `%XX` a byte, and bytes that are not UTF-8 become U+FFFD.
fn push_decoded(out: &mut String, raw: &str) {
    if !raw.bytes().any(|b| matches!(b, b'%' | b'+')) {
        out.push_str(raw);
        return;
    }
    let spaced: Vec<u8> = raw
        .bytes()
        .map(|b| if b == b'+' { b' ' } else { b })
        .collect();
    out.push_str(&percent_encoding::percent_decode(&spaced).decode_utf8_lossy());
}

/// A query string's parameters, in order, decoded as `application/x-www-form-urlencoded`
/// (undecodable bytes become U+FFFD, as in axum's `Query`). Read on every request, so
/// the decoded names and values share one buffer: two allocations, whatever their number.
#[derive(Debug, Default)]
pub(crate) struct Query {
    text: String,
    /// Where each name and value is in `text`: (start, name's end, value's end).
    pairs: Vec<(usize, usize, usize)>,
}

impl Query {
    /// The parameters of a request's query string (`None`: the URI has none).
    pub fn parse(query: Option<&str>) -> Self {
        let Some(query) = query.filter(|q| !q.is_empty()) else {
            return Self::default();
        };
        // Decoding never lengthens a parameter (`%XX` becomes at most U+FFFD's 3 bytes).
        let mut parsed = Self {
            text: String::with_capacity(query.len()),
            pairs: Vec::with_capacity(4),
        };
        // As `form_urlencoded::parse` splits: on `&`, skipping empty pieces, then at the
        // first `=`. One pass over the bytes; most names and values need no decoding and
        // are copied as they are.
        let bytes = query.as_bytes();
        let (mut start, mut eq, mut plain) = (0, None, true);
        for i in 0..=bytes.len() {
            match bytes.get(i) {
                None | Some(b'&') => {
                    if i > start {
                        let at = eq.unwrap_or(i);
                        let value = if at < i { at + 1 } else { i };
                        parsed.push_raw(&query[start..at], &query[value..i], plain);
                    }
                    (start, eq, plain) = (i + 1, None, true);
                }
                Some(b'=') if eq.is_none() => eq = Some(i),
                Some(b'%' | b'+') => plain = false,
                Some(_) => {}
            }
        }
        parsed
    }

    /// Appends one parameter as it appears in a query string (`plain`: nothing in it
    /// needs decoding).
    fn push_raw(&mut self, name: &str, value: &str, plain: bool) {
        if plain {
            return self.push(name, value);
        }
        let start = self.text.len();
        push_decoded(&mut self.text, name);
        let name_end = self.text.len();
        push_decoded(&mut self.text, value);
        self.pairs.push((start, name_end, self.text.len()));
    }

    /// Parameters given as they are (already decoded).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut query = Self::default();
        for (name, value) in pairs {
            query.push(name, value);
        }
        query
    }

    /// Appends one parameter as it is.
    fn push(&mut self, name: &str, value: &str) {
        let start = self.text.len();
        self.text.push_str(name);
        let name_end = self.text.len();
        self.text.push_str(value);
        self.pairs.push((start, name_end, self.text.len()));
    }

    /// The parameters, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs
            .iter()
            .map(|&(start, name, end)| (&self.text[start..name], &self.text[name..end]))
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs().find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

/// What a fired rule does to the reply after the operation ran.
enum Effect {
    Drop,
    Slow(Duration),
    Truncate,
    Malformed,
}

/// Unwinds the connection's task without a panic message: the connection is closed with
/// no answer, as a crashed or cut-off server would.
struct DroppedOnPurpose;

impl Effect {
    async fn apply(self, response: Response) -> Response {
        let (mut parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        match self {
            Effect::Drop => std::panic::resume_unwind(Box::new(DroppedOnPurpose)),
            Effect::Malformed => {
                parts.status = StatusCode::OK;
                // Half a JSON document is never a JSON document.
                let half = bytes.slice(..bytes.len() / 2);
                Response::from_parts(parts, Body::from(half))
            }
            Effect::Truncate => {
                parts
                    .headers
                    .insert(header::CONTENT_LENGTH, bytes.len().into());
                let half = bytes.slice(..bytes.len() / 2);
                let chunks = futures_util::stream::iter([
                    Ok(half),
                    Err(std::io::Error::other("cut short by a fault rule")),
                ]);
                Response::from_parts(parts, Body::from_stream(chunks))
            }
            Effect::Slow(over) => {
                parts
                    .headers
                    .insert(header::CONTENT_LENGTH, bytes.len().into());
                const PIECES: usize = 10;
                let size = bytes.len().div_ceil(PIECES).max(1);
                let pause = over / PIECES as u32;
                let pieces: Vec<Bytes> = (0..bytes.len())
                    .step_by(size)
                    .map(|at| bytes.slice(at..(at + size).min(bytes.len())))
                    .collect();
                let stream =
                    futures_util::stream::unfold(pieces.into_iter(), move |mut rest| async move {
                        let piece = rest.next()?;
                        tokio::time::sleep(pause).await;
                        Some((Ok::<_, std::io::Error>(piece), rest))
                    });
                Response::from_parts(parts, Body::from_stream(stream))
            }
        }
    }
}

/// The shared checks, then the operation; with the id of a fault rule that fired and
/// what it still does to the reply.
async fn checks(
    route: &Route,
    path: PathParams,
    parts: &Parts,
    body: Result<Bytes, String>,
) -> (Answer, Option<i64>, Option<Effect>) {
    let Route {
        shared,
        op,
        error,
        answer,
    } = route;
    let (shared, op) = (&**shared, *op);
    let faults = shared.faults.get();
    if !faults.latency.is_zero() {
        tokio::time::sleep(faults.latency).await;
    }
    let service = Service::from(op.service);
    let Ok(path) = path else {
        let failure = malformed(op, "a path parameter is not valid UTF-8");
        return (error(op, failure), None, None);
    };
    if let Err(failure) = authenticate(&shared.config, service, &parts.headers) {
        return (error(op, failure), None, None);
    }
    // The server did not read the body (its budget was taken, or the body was too slow):
    // a transient failure the SDK retries. Before the nonce check, so a retry may reuse it.
    if let Some(unread) = parts.extensions.get::<BodyUnread>() {
        let failure = Failure::new(ErrorCode::NetworkException, unread.0.clone());
        return (error(op, failure), None, None);
    }
    let query = Query::parse(parts.uri.query());
    if let Err(failure) = check_nonce(shared, op, &query) {
        return (error(op, failure), None, None);
    }
    let user_center = op.documents(ErrorCode::UserCenterException.as_str());
    if let Some(code) = Faults::roll(&faults, user_center) {
        tracing::debug!(operation = op.id, %code, "injected fault");
        return (
            error(
                op,
                Failure::new(code, "injected by the simulator's fault settings"),
            ),
            None,
            None,
        );
    }
    // Parsed only for a rule that looks into bodies: a large batch is costly to read twice.
    let json = body
        .as_ref()
        .ok()
        .filter(|_| shared.rules.wants_body(op.id))
        .and_then(|b| serde_json::from_slice::<Value>(b).ok());
    let enterprise = path
        .get("enterpriseGlobalId")
        .map(String::as_str)
        .or_else(|| query.get("enterpriseGlobalId"));
    let fired = shared.rules.fire(&Subject {
        operation: op.id,
        enterprise,
        body: json.as_ref(),
    });
    let call = Call {
        path,
        query,
        content_type: parts.headers.get(header::CONTENT_TYPE).cloned(),
        body,
    };
    let Some((id, fault)) = fired else {
        return (answer(shared, &call), None, None);
    };
    tracing::debug!(operation = op.id, rule = id, kind = %fault.kind, "fault rule fired");
    let ms = Duration::from_millis(fault.ms.unwrap_or(0).try_into().unwrap_or(0));
    let effect = match fault.kind {
        FaultKind::Code => {
            let code = ErrorCode::from(fault.code.as_deref().unwrap_or("500"));
            let failure = Failure::new(code, format!("injected by fault rule {id}"));
            return (error(op, failure), Some(id), None);
        }
        FaultKind::Status => {
            let status = fault
                .status
                .and_then(|s| u16::try_from(s).ok())
                .and_then(|s| StatusCode::from_u16(s).ok())
                .unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            return (Answer::status(status), Some(id), None);
        }
        FaultKind::Delay => {
            tokio::time::sleep(ms).await;
            return (answer(shared, &call), Some(id), None);
        }
        FaultKind::SlowBody => Effect::Slow(ms),
        FaultKind::DropConnection => Effect::Drop,
        FaultKind::TruncatedBody => Effect::Truncate,
        FaultKind::MalformedBody => Effect::Malformed,
    };
    (answer(shared, &call), Some(id), Some(effect))
}

/// The token of an `Authorization: Bearer <token>` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn header_value<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

/// The credentials each service documents. The order service's document lists no code
/// for a bad token, so it answers `13004` there (a required header failed validation);
/// the member center answers `60000` for the application token, `60005` for the user
/// token and `70001` when the two copies of the application token disagree.
fn authenticate(config: &Config, service: Service, headers: &HeaderMap) -> Result<(), Failure> {
    match service {
        Service::Order => match bearer(headers) {
            Some(token) if token == config.app_token => Ok(()),
            Some(_) => Err(service
                .invalid("Authorization: the application access token is invalid or expired")),
            None => Err(service.invalid("Authorization: `Bearer <APP_ACCESS_TOKEN>` is required")),
        },
        Service::Member => {
            let app_token = |cause: &str| Failure::new(ErrorCode::ApplicationTokenInvalid, cause);
            let Some(authorization) = bearer(headers) else {
                return Err(app_token(
                    "Authorization: `Bearer <CLIENT_TOKEN>` is required",
                ));
            };
            match header_value(headers, "clienttoken") {
                None | Some("") => return Err(app_token("the clientToken header is required")),
                Some(token) if token != config.client_token => {
                    return Err(app_token("the clientToken is invalid or expired"));
                }
                Some(token) if token != authorization => {
                    return Err(Failure::new(
                        ErrorCode::SecurityCheckFailed,
                        "the Authorization bearer token does not match the clientToken header",
                    ));
                }
                Some(_) => {}
            }
            match header_value(headers, "usertoken") {
                Some(token) if token == config.user_token => Ok(()),
                Some(token) if !token.is_empty() => Err(Failure::new(
                    ErrorCode::UserTokenInvalid,
                    "the userToken is invalid or expired",
                )),
                _ => Err(Failure::new(
                    ErrorCode::UserTokenInvalid,
                    "the userToken header is required",
                )),
            }
        }
    }
}

/// A request the gate refuses before any handler reads it: an undecodable path or
/// query, or a missing, empty or repeated `g_nonce`. The order service answers `13004`;
/// the member center "parameter empty" (`40000`) where the operation documents it and
/// otherwise the service-wide "security check failed" (`70001`), the code of its
/// anti-replay check. The message names what is wrong.
pub(crate) fn malformed(op: &Operation, cause: impl Into<String>) -> Failure {
    let cause = cause.into();
    match Service::from(op.service) {
        Service::Order => Service::Order.invalid(cause),
        Service::Member => {
            let code = if op.documents(ErrorCode::ParameterEmpty.as_str()) {
                ErrorCode::ParameterEmpty
            } else {
                ErrorCode::SecurityCheckFailed
            };
            let message = format!("{}: {cause}", standard_message(&code));
            Failure::with_message(code, message, cause)
        }
    }
}

/// A missing, empty or repeated `g_nonce` is a malformed request ([`malformed`]); a
/// replayed one is refused with `13004` by the order service and as a failed security
/// check (`70001`) by the member center. A request carrying two `g_nonce`s is refused
/// whatever their values (a fresh one cannot launder a used one), and neither is recorded.
fn check_nonce(shared: &Shared, op: &Operation, query: &Query) -> Result<(), Failure> {
    let mut nonces = query
        .pairs()
        .filter(|(k, _)| *k == "g_nonce")
        .map(|(_, v)| v);
    let (first, second) = (nonces.next(), nonces.next());
    if second.is_some() {
        let given = 2 + nonces.count();
        return Err(malformed(
            op,
            format!("g_nonce must be given exactly once (given {given} times)"),
        ));
    }
    let Some(nonce) = first.filter(|v| !v.is_empty()) else {
        return Err(malformed(op, "g_nonce is required"));
    };
    let fresh = shared
        .nonces
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .admit(nonce, Instant::now());
    if fresh {
        return Ok(());
    }
    let cause = "g_nonce has already been used (replayed request)";
    Err(match Service::from(op.service) {
        Service::Order => Service::Order.invalid(cause),
        Service::Member => Failure::with_message(
            ErrorCode::SecurityCheckFailed,
            format!("security check failed: {cause}"),
            cause,
        ),
    })
}

/// The `g_nonce`s seen recently: bounded both in time and in count, so memory stays
/// bounded however many requests arrive. Only a keyed 64-bit hash of each nonce is kept,
/// so a long nonce costs no more than a short one.
#[derive(Debug)]
pub(crate) struct NonceWindow {
    hasher: RandomState,
    /// Keyed hashes already: the set uses them as they are instead of hashing them again.
    seen: HashSet<u64, BuildHasherDefault<Prehashed>>,
    order: VecDeque<(Instant, u64)>,
    window: Duration,
    capacity: usize,
}

impl NonceWindow {
    pub fn new(window: Duration, capacity: usize) -> Self {
        Self {
            hasher: RandomState::new(),
            seen: HashSet::default(),
            order: VecDeque::new(),
            window,
            capacity: capacity.max(1),
        }
    }

    /// Records the nonce; `false` if it was seen within the window.
    pub fn admit(&mut self, nonce: &str, now: Instant) -> bool {
        while let Some(&(at, hash)) = self.order.front() {
            if now.duration_since(at) < self.window && self.order.len() < self.capacity {
                break;
            }
            self.order.pop_front();
            self.seen.remove(&hash);
        }
        let hash = self.hasher.hash_one(nonce);
        if !self.seen.insert(hash) {
            return false;
        }
        self.order.push_back((now, hash));
        true
    }
}

/// The hasher of [`NonceWindow::seen`]: its keys are the output of a keyed hash.
#[derive(Debug, Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed here (`write_u64`); anything else is folded in.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_reads_as_form_urlencoded_does() {
        for raw in [
            "",
            "a=1",
            "a=1&&b=%41+c&=x&y&z=%FF&%2B=%26&k=v=w&+=+&a=2",
            "g_nonce=abc-1&appKey=%E4%BD%A0%E5%A5%BD&bad=%E4%BD&pct=%&pct2=%4",
            "&&&",
            "x=%zz&y=a%20b%2",
        ] {
            let expected: Vec<(String, String)> = form_urlencoded::parse(raw.as_bytes())
                .into_owned()
                .collect();
            let query = Query::parse(Some(raw));
            let got: Vec<(String, String)> = query
                .pairs()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            assert_eq!(got, expected, "{raw:?}");
            let first = expected.first().map(|(k, _)| k.as_str()).unwrap_or("none");
            assert_eq!(
                query.get(first),
                expected
                    .iter()
                    .find(|(k, _)| k == first)
                    .map(|(_, v)| v.as_str()),
                "{raw:?}"
            );
        }
        assert_eq!(Query::parse(None).pairs().count(), 0);
    }

    #[test]
    fn nonce_window_rejects_replays_and_forgets() {
        let mut window = NonceWindow::new(Duration::from_secs(10), 3);
        let t0 = Instant::now();
        assert!(window.admit("a", t0));
        assert!(!window.admit("a", t0));
        assert!(window.admit("b", t0));
        assert!(window.admit("c", t0));
        // Capacity 3: admitting "d" forgets "a", the oldest.
        assert!(window.admit("d", t0));
        assert!(window.admit("a", t0));
        // After the window everything is forgotten.
        let later = t0 + Duration::from_secs(11);
        assert!(window.admit("d", later));
        assert!(window.order.len() <= 3);
    }

    #[test]
    fn bearer_tokens() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "Bearer  tok ".parse().unwrap());
        assert_eq!(bearer(&headers), Some("tok"));
        headers.insert(header::AUTHORIZATION, "Basic tok".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }
}
