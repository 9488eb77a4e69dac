//! The reply envelope (`code`, `message`, `cause`, `data`) and what an attempt's reply
//! comes to: the operation's `data`, or the error it reports, and whether repeating the
//! attempt may help.

use std::{fmt, time::Duration};

use progenitor_client::ResponseValue;

use super::Operation;
use crate::{ApiError, Error, ErrorCode, ValidationError, retry::Verdict};

/// What progenitor's `send()` returns.
pub type Raw<R> = Result<ResponseValue<R>, progenitor_client::Error<()>>;

/// The business result code: integer `0` on success, a string code on error.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum ReplyCode {
    /// An integer code; `0` is success.
    Int(i64),
    /// A string code: an error.
    String(String),
}

impl ReplyCode {
    /// The success code.
    pub const SUCCESS: Self = Self::Int(0);

    /// Whether this code reports success: integer `0`, or the string `"0"` that some
    /// gateways send.
    pub fn is_success(&self) -> bool {
        match self {
            Self::Int(n) => *n == 0,
            Self::String(s) => s.trim() == "0",
        }
    }

    /// The error code this stands for; `None` on success.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            _ if self.is_success() => None,
            Self::Int(n) => Some(ErrorCode::from(n.to_string())),
            Self::String(s) => Some(ErrorCode::from(s.as_str())),
        }
    }
}

/// Read without buffering: serde's untagged enums copy the whole value first, so a
/// hostile `code` (a huge array) would cost many times its bytes.
impl<'de> serde::Deserialize<'de> for ReplyCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Code;
        impl serde::de::Visitor<'_> for Code {
            type Value = ReplyCode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer or a string code")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<ReplyCode, E> {
                Ok(ReplyCode::Int(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ReplyCode, E> {
                i64::try_from(n)
                    .map(ReplyCode::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ReplyCode, E> {
                Ok(ReplyCode::String(s.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<ReplyCode, E> {
                Ok(ReplyCode::String(s))
            }
        }
        d.deserialize_any(Code)
    }
}

impl fmt::Display for ReplyCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(n) => write!(f, "{n}"),
            Self::String(s) => f.write_str(s),
        }
    }
}

impl std::str::FromStr for ReplyCode {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(s.parse()
            .map(Self::Int)
            .unwrap_or_else(|_| Self::String(s.to_string())))
    }
}

impl From<ErrorCode> for ReplyCode {
    fn from(code: ErrorCode) -> Self {
        Self::String(code.as_str().to_string())
    }
}

/// The parts of a reply envelope.
#[derive(Debug)]
pub struct Parts<T> {
    /// The business result code.
    pub code: ReplyCode,
    /// `success`, or the error text.
    pub message: String,
    /// The error cause, on errors.
    pub cause: Option<String>,
    /// The payload, when present.
    pub data: Option<T>,
}

/// A reply envelope: implemented by `build.rs` for every operation's reply type.
pub trait Envelope: Sized {
    /// The operation's `data` type (`()` where the documents give none).
    type Data;
    /// The code under which a failed reply still carries a useful `data`.
    const PARTIAL_CODE: Option<&'static str> = None;
    /// Splits the envelope.
    fn into_parts(self) -> Parts<Self::Data>;
    /// The error for a [`Envelope::PARTIAL_CODE`] reply.
    fn partial(error: ApiError, _data: Self::Data) -> Error {
        Error::Api(error)
    }
}

/// The result of one attempt, whether repeating it is allowed, and after how long the
/// server asked for it to be repeated (`Retry-After`).
pub(super) async fn settle<R: Envelope>(
    op: &'static Operation,
    raw: Raw<R>,
    status: u16,
    attempt_timeout: Option<Duration>,
) -> (Result<R::Data, Error>, Verdict, Option<Duration>) {
    match raw {
        Ok(reply) => {
            let (result, verdict) = envelope::<R>(op.id, reply);
            (result, verdict, None)
        }
        Err(failure) => {
            let (error, verdict, retry_after) =
                failed(op.id, failure, status, attempt_timeout).await;
            (Err(error), verdict, retry_after)
        }
    }
}

/// An attempt that produced no envelope: what happened, whether a repeat may help, and the
/// wait the server asked for.
async fn failed(
    operation: &'static str,
    failure: progenitor_client::Error<()>,
    status: u16,
    attempt_timeout: Option<Duration>,
) -> (Error, Verdict, Option<Duration>) {
    use progenitor_client::Error as P;
    let mut retry_after = None;
    let error = match failure {
        P::InvalidRequest(message) => {
            Error::Validation(ValidationError::from_builder_message(&message))
        }
        P::Custom(message) => Error::Credentials(message),
        P::CommunicationError(source)
        | P::InvalidUpgrade(source)
        | P::ResponseBodyError(source) => {
            let (error, verdict) = crate::transport::classify(operation, source, attempt_timeout);
            return (error, verdict, None);
        }
        P::InvalidResponsePayload(body, e) => match business_code(operation, status, &body, &e) {
            Some(error) => {
                let verdict = code_verdict(&error.code);
                return (Error::Api(error), verdict, None);
            }
            None => Error::Decode {
                operation,
                status,
                reason: e.to_string(),
                excerpt: excerpt(&body),
            },
        },
        P::UnexpectedResponse(response) if response.status().is_redirection() => Error::Redirect {
            operation,
            status: response.status().as_u16(),
            location: response
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned()),
        },
        P::UnexpectedResponse(response) => {
            let status = response.status().as_u16();
            // The header counts only on a status the server may ask to have repeated.
            if crate::retry::honours_retry_after(status) {
                retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| {
                        crate::retry::retry_after(v.as_bytes(), std::time::SystemTime::now())
                    });
            }
            Error::UnexpectedStatus {
                operation,
                status,
                // Only what the message shows is read: a huge error page costs nothing.
                excerpt: crate::transport::read_excerpt(response, EXCERPT_BYTES).await,
            }
        }
        P::ErrorResponse(response) => Error::UnexpectedStatus {
            operation,
            status: response.status().as_u16(),
            excerpt: String::new(),
        },
    };
    let verdict = match &error {
        Error::UnexpectedStatus { status, .. } => crate::retry::status_verdict(*status),
        _ => Verdict::Final,
    };
    (error, verdict, retry_after)
}

/// The business error of a reply whose envelope did not decode, when its `code` can be
/// read and is an error: the code is what the caller acts on, so it is not lost to a
/// `data` of the wrong shape or a missing `message`. Reads the body again, skipping
/// everything but `code`, `message` and `cause`.
fn business_code(
    operation: &'static str,
    status: u16,
    body: &[u8],
    failure: &serde_json::Error,
) -> Option<ApiError> {
    #[derive(serde::Deserialize)]
    struct Lenient {
        code: ReplyCode,
        #[serde(default, deserialize_with = "lenient_text")]
        message: Option<String>,
        #[serde(default, deserialize_with = "lenient_text")]
        cause: Option<String>,
    }
    let lenient: Lenient = serde_json::from_slice(body).ok()?;
    let code = lenient.code.error_code()?;
    Some(ApiError {
        operation,
        code,
        message: lenient.message.unwrap_or_default(),
        cause: lenient.cause,
        http_status: status,
        decode_failure: Some(Box::new(crate::error::DecodeFailure {
            reason: failure.to_string(),
            excerpt: excerpt(body),
        })),
    })
}

/// A string as it is; a number or boolean as its JSON text; anything else (null, an array,
/// an object) as absent, skipped without being kept.
fn lenient_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct Text;
    impl<'de> serde::de::Visitor<'de> for Text {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
            Ok(Some(s.to_string()))
        }
        fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
            Ok(Some(s))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
            Ok(Some(n.to_string()))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
            Ok(Some(n.to_string()))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
            Ok(Some(n.to_string()))
        }
        fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
            Ok(Some(b.to_string()))
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            while map
                .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                .is_some()
            {}
            Ok(None)
        }
    }
    d.deserialize_any(Text)
}

/// What a business code allows: the documents say code 500 means "network exception,
/// retry".
fn code_verdict(code: &ErrorCode) -> Verdict {
    if *code == ErrorCode::NetworkException {
        Verdict::RetryRequested
    } else {
        Verdict::Final
    }
}

/// A decoded envelope: its `data`, or the business error it reports.
fn envelope<R: Envelope>(
    operation: &'static str,
    reply: ResponseValue<R>,
) -> (Result<R::Data, Error>, Verdict) {
    let http_status = reply.status().as_u16();
    let Parts {
        code,
        message,
        cause,
        data,
    } = reply.into_inner().into_parts();
    let Some(code) = code.error_code() else {
        return match data {
            Some(data) => (Ok(data), Verdict::Final),
            None => (
                Err(Error::Decode {
                    operation,
                    status: http_status,
                    reason: "success reply without `data`".to_string(),
                    excerpt: String::new(),
                }),
                Verdict::Final,
            ),
        };
    };
    let verdict = code_verdict(&code);
    let error = ApiError {
        operation,
        code,
        message,
        cause,
        http_status,
        decode_failure: None,
    };
    match data {
        Some(data) if R::PARTIAL_CODE == Some(error.code.as_str()) => {
            (Err(R::partial(error, data)), verdict)
        }
        _ => (Err(Error::Api(error)), verdict),
    }
}

/// How much of a body error messages quote.
const EXCERPT_BYTES: usize = 200;

/// At most [`EXCERPT_BYTES`] of a body, lossily decoded, for error messages.
fn excerpt(body: &[u8]) -> String {
    let cut = &body[..body.len().min(EXCERPT_BYTES)];
    String::from_utf8_lossy(cut).into_owned()
}
