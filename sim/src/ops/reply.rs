//! The generated reply envelopes, built from an operation's result.

use licensing_sdk::{ReplyCode, member::types as m, operations::Operation, order::types as o};
use serde::Serialize;
use serde_json::Value;

use super::Failure;

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

/// An operation's reply envelope as JSON, and whether it reports a failure.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub failed: bool,
    /// `None`: the envelope could not be serialised (logged).
    pub body: Option<Vec<u8>>,
}

/// The success envelope, or the error envelope.
///
/// Every reply goes through here, so this is where the documents are enforced: a failure
/// whose code the documents do not give for `op` is a simulator bug. Debug builds (every
/// test run) panic, which drops the connection so the caller sees an error; release builds
/// log it at error level and still answer.
pub(crate) fn encode<R: Reply>(op: &Operation, result: Result<R::Data, Failure>) -> Encoded {
    let (failed, envelope) = match result {
        Ok(data) => (false, R::success(data)),
        Err(failure) => {
            if !op.documents(failure.code.as_str()) {
                undocumented(op, &failure);
            }
            tracing::debug!(operation = op.id, code = %failure.code, cause = %failure.cause, "business exception");
            (true, R::failure(failure))
        }
    };
    // Most envelopes fit; a larger one grows the buffer as it is written.
    let mut body = Vec::with_capacity(512);
    let body = match serde_json::to_writer(&mut body, &envelope) {
        Ok(()) => Some(body),
        Err(e) => {
            tracing::error!(error = %e, "a reply could not be serialized");
            None
        }
    };
    Encoded { failed, body }
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
