//! A business error and the documented code each kind of failure answers.

use licensing_sdk::{ErrorCode, member::types as m, operations, operations::Operation};

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
            message: excerpt(message.into()),
            cause: excerpt(cause.into()),
            partial: None,
        }
    }
}

/// The most of a message or cause an error reply carries: what a request sent is echoed in
/// the reply only as a short excerpt.
pub(crate) const MAX_ECHO: usize = 1024;

/// `text` cut to [`MAX_ECHO`] bytes at a character boundary, saying how much was left out.
fn excerpt(mut text: String) -> String {
    if text.len() <= MAX_ECHO {
        return text;
    }
    let mut end = MAX_ECHO;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let left = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("… ({left} more bytes)"));
    text
}

/// The documents give messages by meaning; these are the simulator's wording.
pub(crate) fn standard_message(code: &ErrorCode) -> &'static str {
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

/// A rule of the documents, broken: its code, and its message when it has its own.
impl From<crate::state::rules::Broken> for Failure {
    fn from(broken: crate::state::rules::Broken) -> Self {
        match broken.message {
            Some(message) => Failure::with_message(broken.code, message, broken.cause),
            None => Failure::new(broken.code, broken.cause),
        }
    }
}
