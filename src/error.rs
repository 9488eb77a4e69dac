//! The one error type of every operation.

use std::fmt;

use crate::{ErrorCode, transport::TransportKind};

/// Why an operation failed.
///
/// Match on the variant to decide what to do: [`Error::Validation`] is a bug in the
/// caller's input (nothing was sent); [`Error::Api`] is the platform's answer with a typed
/// [`ErrorCode`]; [`Error::PartialFailure`] is `addMembers` succeeding for some employees;
/// the others are transport or protocol failures, after any retries the policy allowed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request breaks a documented rule; it was not sent.
    #[error("invalid request: {0}")]
    Validation(#[from] ValidationError),

    /// The request could not be sent or its reply not received.
    #[error(
        "{operation}: {kind}; the request {}: {source}",
        if *may_have_been_sent { "may have been sent" } else { "was not sent" }
    )]
    Transport {
        /// The operation id, e.g. `batchOrder`.
        operation: &'static str,
        /// Which kind of failure (connect refused, DNS, timeout, reset, …).
        kind: TransportKind,
        /// Whether the server may have received (and applied) the request.
        may_have_been_sent: bool,
        /// The underlying failure.
        #[source]
        source: reqwest::Error,
    },

    /// The server's TLS certificate was rejected; never retried.
    #[error("{operation}: TLS failure: {reason}; the request was not sent")]
    Tls {
        /// The operation id.
        operation: &'static str,
        /// What was wrong with the certificate (untrusted issuer, wrong host name, …).
        reason: String,
        /// The underlying failure.
        #[source]
        source: reqwest::Error,
    },

    /// The reply body was larger than the client's maximum (`max_reply_bytes`); reading
    /// stopped at the limit.
    #[error("{operation}: the reply body is larger than the limit of {limit} bytes")]
    ReplyTooLarge {
        /// The operation id.
        operation: &'static str,
        /// The limit, in bytes.
        limit: u64,
    },

    /// The server answered with a redirect; the SDK follows none, so credentials and the
    /// body never reach another origin.
    #[error(
        "{operation}: HTTP {status} redirect to {} not followed",
        location.as_deref().map_or_else(|| "nowhere (no Location)".to_string(), |l| format!("\"{}\"", Shown(l)))
    )]
    Redirect {
        /// The operation id.
        operation: &'static str,
        /// The 3xx status.
        status: u16,
        /// The `Location` header, if any.
        location: Option<String>,
    },

    /// The call's deadline passed before it completed (all attempts and waits included).
    #[error("{operation}: deadline of {} exceeded after {attempts} attempt(s)", crate::transport::seconds(*deadline))]
    DeadlineExceeded {
        /// The operation id.
        operation: &'static str,
        /// The deadline that passed.
        deadline: std::time::Duration,
        /// Attempts started before it passed.
        attempts: u32,
    },

    /// The client's configuration is missing or malformed (builder or environment).
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),

    /// The server answered with an HTTP status the platform does not document (only 200
    /// and 299 are).
    #[error("{operation}: unexpected HTTP status {status}; body starts with {excerpt:?}")]
    UnexpectedStatus {
        /// The operation id.
        operation: &'static str,
        /// The HTTP status.
        status: u16,
        /// The first bytes of the body, lossily decoded.
        excerpt: String,
    },

    /// The reply body is not the documented envelope.
    #[error(
        "{operation}: undecodable reply (HTTP {status}): {}; body starts with {excerpt:?}",
        Shown(reason)
    )]
    Decode {
        /// The operation id.
        operation: &'static str,
        /// The HTTP status of the reply.
        status: u16,
        /// What the decoder reported.
        reason: String,
        /// The first bytes of the body, lossily decoded.
        excerpt: String,
    },

    /// The platform reported a business error (HTTP 299, or HTTP 200 with a non-zero code).
    #[error(transparent)]
    Api(ApiError),

    /// `addMembers` added some employees and rejected others (code `60027`): both lists.
    #[error("{error} ({} added, {} failed)", result.succeeded.len(), result.failed.len())]
    PartialFailure {
        /// The business error as reported.
        error: ApiError,
        /// The employees added and the items rejected, with reasons.
        result: Box<crate::member::types::AddMembersResult>,
    },

    /// The credentials provider could not supply a token.
    #[error("credentials unavailable: {0}")]
    Credentials(String),
}

impl Error {
    /// A stable, low-cardinality name of what happened, one of a fixed set: the business
    /// code for a documented business error ([`ErrorCode::is_known`]), [`OTHER_CODE`] for
    /// any other code, the HTTP status of an [`Error::UnexpectedStatus`], else the kind
    /// (`read_timeout`, `tls`, …). Telemetry reports it as `error.type`; server text never
    /// reaches it.
    pub fn kind_name(&self) -> String {
        match self {
            Error::Validation(_) => "validation".into(),
            Error::Transport { kind, .. } => kind.name().into(),
            Error::Tls { .. } => "tls".into(),
            Error::ReplyTooLarge { .. } => "reply_too_large".into(),
            Error::Redirect { .. } => "redirect".into(),
            Error::DeadlineExceeded { .. } => "deadline_exceeded".into(),
            Error::Config(_) => "config".into(),
            Error::UnexpectedStatus { status, .. } => status.to_string(),
            Error::Decode { .. } => "decode".into(),
            Error::Api(e) | Error::PartialFailure { error: e, .. } if e.code.is_known() => {
                e.code.as_str().into()
            }
            Error::Api(_) | Error::PartialFailure { .. } => OTHER_CODE.into(),
            Error::Credentials(_) => "credentials".into(),
        }
    }

    /// The business error code, for [`Error::Api`] and [`Error::PartialFailure`].
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            Error::Api(e) | Error::PartialFailure { error: e, .. } => Some(&e.code),
            _ => None,
        }
    }
}

/// A typed value built from the generated builders broke a rule of the spec (pattern,
/// length, required field): the same error as if the request had been sent with it.
macro_rules! conversion_errors {
    ($($service:ident),*) => {$(
        impl From<crate::$service::types::error::ConversionError> for Error {
            fn from(e: crate::$service::types::error::ConversionError) -> Self {
                Error::Validation(ValidationError::from_builder_message(&e.to_string()))
            }
        }
    )*};
}
conversion_errors!(order, member);

/// [`Error::kind_name`] of a business error whose code the documents do not list: the
/// OpenTelemetry fallback value of `error.type`.
pub const OTHER_CODE: &str = "_OTHER";

/// A business error reported by the platform.
///
/// Its fields hold the server's text in full. `Display` shows at most
/// [`SHOWN_TEXT_BYTES`] of each of `code`, `message` and `cause`, with control characters
/// (line breaks, ANSI escapes, …) escaped, so that a server cannot flood or forge the log
/// lines an error is written to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ApiError {
    /// The operation id, e.g. `addMembers`.
    pub operation: &'static str,
    /// The documented code (or [`ErrorCode::Other`]).
    pub code: ErrorCode,
    /// The platform's message (empty when the reply had none).
    pub message: String,
    /// The platform's cause, when given.
    pub cause: Option<String>,
    /// 299 for a business exception; 200 when the platform reported a non-zero code.
    pub http_status: u16,
    /// Why the rest of the reply (its `data`, or a `message` missing or of the wrong type)
    /// could not be read, when its business code could: the code is kept, the rest is lost.
    #[source]
    pub decode_failure: Option<Box<DecodeFailure>>,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: error {}", self.operation, Shown(self.code.as_str()))?;
        if let Some(meaning) = self.code.description() {
            write!(f, " ({meaning})")?;
        }
        write!(f, ": {}", Shown(&self.message))?;
        if let Some(cause) = &self.cause {
            write!(f, "; cause: {}", Shown(cause))?;
        }
        if self.decode_failure.is_some() {
            f.write_str(" (the rest of the reply is undecodable)")?;
        }
        Ok(())
    }
}

/// A reply whose business code was read but whose other parts were not: the source of
/// an [`ApiError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("undecodable reply: {}; body starts with {excerpt:?}", Shown(reason))]
pub struct DecodeFailure {
    /// What the decoder reported.
    pub reason: String,
    /// The first bytes of the body, lossily decoded.
    pub excerpt: String,
}

/// The most `Display` shows of one piece of server text (a code, a message, a cause, a
/// decoder's reason, a `Location`), escapes included; the rest is counted, not shown.
pub const SHOWN_TEXT_BYTES: usize = 1024;

/// Server text as an error's `Display` shows it: control characters and the Unicode
/// line and bidirectional controls escaped (`\n`, `\u{1b}`), at most
/// [`SHOWN_TEXT_BYTES`], then how much was left out.
pub(crate) struct Shown<'a>(pub &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        let mut shown = 0;
        for (at, c) in text.char_indices() {
            let inert = matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            let width = if c.is_control() || inert {
                c.escape_default().len()
            } else {
                c.len_utf8()
            };
            if shown + width > SHOWN_TEXT_BYTES {
                return write!(f, "… ({} more bytes)", text.len() - at);
            }
            shown += width;
            if c.is_control() || inert {
                write!(f, "{}", c.escape_default())?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        Ok(())
    }
}

/// A request that breaks a documented rule, named by field and rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {rule}")]
pub struct ValidationError {
    /// The field as it appears on the wire (`userList[3].name`) or, for a rule typify
    /// checks while building the request, as the builder names it (`user_name`).
    pub field: String,
    /// The rule broken, e.g. `must have at most 100 items`.
    pub rule: String,
}

impl ValidationError {
    /// A rule broken by `field`.
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            rule: rule.into(),
        }
    }

    /// Reads back the messages the generated builders report (typify's conversions,
    /// progenitor's missing parameters, and our own [`fmt::Display`]).
    pub(crate) fn from_builder_message(message: &str) -> Self {
        let split =
            |prefix: &str, separator: &str| message.strip_prefix(prefix)?.split_once(separator);
        // progenitor wraps what typify reported about a body built from a builder.
        if let Some((_, inner)) = split("conversion to `", "` for body failed: ") {
            return Self::from_builder_message(inner);
        }
        if let Some((field, rule)) = split("`", "` ") {
            return Self::new(field, rule);
        }
        if message.starts_with("error converting supplied value for ")
            || message.starts_with("no value supplied for ")
        {
            let (path, rule) = nested(message);
            return Self::new(path, rule);
        }
        // progenitor: "conversion to `<type>` for <field> failed"
        if let Some((ty, rest)) = split("conversion to `", "` for ")
            && let Some(field) = rest.strip_suffix(" failed")
        {
            let ty = ty.replace(' ', "");
            let rule = match ty.as_str() {
                "::std::num::NonZeroU32" | "::std::num::NonZeroU64" => {
                    "must be at least 1".to_string()
                }
                _ => format!("must convert to `{ty}`"),
            };
            return Self::new(wire(field), rule);
        }
        if let Some(field) = message.strip_suffix(" was not initialized") {
            return Self::new(wire(field), "is required");
        }
        Self::new("request", message)
    }
}

/// The path and rule of a builder's message, through nested builders:
/// `error converting supplied value for assets: [1] error converting supplied value for
/// products: [0] no value supplied for product_uri` is `assets[1].products[0].productUri`,
/// "is required". Fields are spelled as on the wire (`productUri`).
fn nested(message: &str) -> (String, String) {
    let mut path = String::new();
    let mut rest = message;
    loop {
        if let Some(field) = rest.strip_prefix("no value supplied for ") {
            push(&mut path, field);
            return (path, "is required".to_string());
        }
        let Some((field, inner)) = rest
            .strip_prefix("error converting supplied value for ")
            .and_then(|r| r.split_once(": "))
        else {
            // typify's message for a zero given where `minimum: 1` made the type NonZero.
            let rule = match rest {
                "out of range integral type conversion attempted" => "must be at least 1",
                rule => rule,
            };
            return (path, rule.to_string());
        };
        push(&mut path, field);
        rest = inner;
        while let Some(index) = rest
            .strip_prefix('[')
            .and_then(|r| r.split_once("] "))
            .filter(|(i, _)| i.parse::<usize>().is_ok())
        {
            path.push_str(&format!("[{}]", index.0));
            rest = index.1;
        }
    }
}

/// A parameter's wire name from progenitor's (`page_num` is `pageNum`).
fn wire(snake: &str) -> String {
    let mut name = String::new();
    push(&mut name, snake);
    name
}

fn push(path: &mut String, snake: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            path.extend(c.to_uppercase());
            upper = false;
        } else {
            path.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ValidationError as V;
    use super::{SHOWN_TEXT_BYTES, Shown};

    #[test]
    fn server_text_is_shown_capped_and_inert() {
        assert_eq!(Shown("plain text, é").to_string(), "plain text, é");
        assert_eq!(
            Shown("a\nb\r\nc\td\u{1b}[31me\u{7f}\u{2028}\u{202e}").to_string(),
            "a\\nb\\r\\nc\\td\\u{1b}[31me\\u{7f}\\u{2028}\\u{202e}"
        );
        let long = "x".repeat(1_000_000);
        let shown = Shown(&long).to_string();
        assert!(shown.starts_with(&"x".repeat(SHOWN_TEXT_BYTES)), "{shown}");
        assert!(shown.ends_with("… (998976 more bytes)"), "{shown}");
        // Escapes count: a line of line breaks is cut at the same size, on a whole escape.
        let breaks = "\n".repeat(10_000);
        let shown = Shown(&breaks).to_string();
        assert!(
            shown.starts_with(&"\\n".repeat(SHOWN_TEXT_BYTES / 2)),
            "{shown}"
        );
        assert!(shown.ends_with(&format!("… ({} more bytes)", 10_000 - SHOWN_TEXT_BYTES / 2)));
        assert!(!shown.contains('\n'));
        // Never cut inside a character.
        let wide = "é".repeat(SHOWN_TEXT_BYTES);
        assert!(
            Shown(&wide)
                .to_string()
                .starts_with(&"é".repeat(SHOWN_TEXT_BYTES / 2))
        );
    }

    #[test]
    fn reads_builder_messages() {
        let cases = [
            (
                "`userList` must have 1 to 100 items (has 0)",
                "userList",
                "must have 1 to 100 items (has 0)",
            ),
            (
                "error converting supplied value for name: longer than 30 characters",
                "name",
                "longer than 30 characters",
            ),
            (
                "conversion to `:: std :: num :: NonZeroU32` for page_num failed",
                "pageNum",
                "must be at least 1",
            ),
            (
                "enterprise_global_id was not initialized",
                "enterpriseGlobalId",
                "is required",
            ),
            // Parameters and builder fields are named as on the wire, through nested builders.
            (
                "no value supplied for channel_code",
                "channelCode",
                "is required",
            ),
            (
                "error converting supplied value for user_list: [1] error converting supplied value for user_name: doesn't match pattern",
                "userList[1].userName",
                "doesn't match pattern",
            ),
            (
                "conversion to `EditMemberRequest` for body failed: error converting supplied value for name: longer than 30 characters",
                "name",
                "longer than 30 characters",
            ),
            (
                "error converting supplied value for size: out of range integral type conversion attempted",
                "size",
                "must be at least 1",
            ),
            ("something else", "request", "something else"),
        ];
        for (message, field, rule) in cases {
            assert_eq!(
                V::from_builder_message(message),
                V::new(field, rule),
                "{message}"
            );
        }
        let ours = V::new("orderList[0].srcLicenseOrderId", "is required");
        assert_eq!(V::from_builder_message(&ours.to_string()), ours);
    }
}

/// A client setting that is missing or malformed, named as the user gave it: a builder
/// method (`base_url`) or an environment variable (`LICENSING_ORDER_URL`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{setting}: {problem}")]
pub struct ConfigError {
    /// The builder setting or environment variable.
    pub setting: String,
    /// What is wrong with it. Never contains a secret's value.
    pub problem: String,
}

impl ConfigError {
    /// A problem with `setting`.
    pub fn new(setting: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            setting: setting.into(),
            problem: problem.into(),
        }
    }
}
