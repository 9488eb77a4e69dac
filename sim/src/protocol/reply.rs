//! A reply as the gate handles it: HTTP 200 with the success envelope, HTTP 299 with the
//! error envelope, or a bare status.

use axum::{
    body::{Body, Bytes},
    http::{HeaderValue, StatusCode, header},
    response::Response,
};

use crate::ops::Encoded;

/// The status of every business exception.
fn business_exception() -> StatusCode {
    StatusCode::from_u16(299).expect("299 is a valid status code")
}

/// A reply as the gate handles it: the hooks see its bytes as they are, and it becomes a
/// response once, at the end.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: StatusCode,
    /// The JSON envelope; empty for a bare status (a fault rule's).
    pub body: Bytes,
}

impl From<Encoded> for Answer {
    fn from(encoded: Encoded) -> Self {
        match encoded.body {
            None => Self::status(StatusCode::INTERNAL_SERVER_ERROR),
            Some(body) => Self {
                status: if encoded.failed {
                    business_exception()
                } else {
                    StatusCode::OK
                },
                body: body.into(),
            },
        }
    }
}

impl Answer {
    /// A status and no body.
    pub fn status(status: StatusCode) -> Self {
        Self {
            status,
            body: Bytes::new(),
        }
    }

    pub fn into_response(self) -> Response {
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
