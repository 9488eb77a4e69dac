//! progenitor's client hooks for both clients, and the state of the attempt in flight that
//! the hooks, the decoding of opaque fields and the call loop share through a task-local:
//! neither progenitor nor serde hands any of them a value of the others'.

use std::{
    sync::{
        PoisonError,
        atomic::{AtomicU16, AtomicUsize, Ordering},
    },
    time::Duration,
};

use progenitor_client::{ClientHooks, OperationInfo};

use super::{
    Runtime,
    origin::{origin_of, same_origin},
};
use crate::auth::SecretString;

macro_rules! hooks {
    ($client:ty) => {
        impl ClientHooks<Runtime> for $client {
            async fn pre<E>(
                &self,
                request: &mut reqwest::Request,
                _info: &OperationInfo,
            ) -> Result<(), progenitor_client::Error<E>> {
                self.inner
                    .prepare(request)
                    .await
                    .map_err(progenitor_client::Error::Custom)
            }

            async fn post<E>(
                &self,
                result: &reqwest::Result<reqwest::Response>,
                _info: &OperationInfo,
            ) -> Result<(), progenitor_client::Error<E>> {
                if let Ok(response) = result {
                    let _ = ATTEMPT.try_with(|a| {
                        a.status
                            .store(response.status().as_u16(), Ordering::Relaxed)
                    });
                }
                Ok(())
            }

            async fn exec(
                &self,
                request: reqwest::Request,
                _info: &OperationInfo,
            ) -> reqwest::Result<reqwest::Response> {
                let response = self.client.execute(request).await?;
                if !same_origin(response.url(), &self.inner.origin) {
                    // A custom client followed a redirect: report it, read nothing of it.
                    let moved = origin_of(response.url());
                    let _ = ATTEMPT.try_with(|a| a.set_redirected(moved));
                }
                Ok(crate::transport::limit_body(
                    response,
                    self.inner.max_reply_bytes,
                ))
            }
        }
    };
}
hooks!(crate::order::Client);
hooks!(crate::member::Client);

/// What the hooks and the retry loop share about the attempt in flight.
pub(super) struct Attempt {
    /// A per-call timeout, set on the request by the pre hook.
    pub(super) timeout_override: Option<Duration>,
    /// The HTTP status, for decode errors and telemetry (progenitor drops it); 0 if none.
    pub(super) status: AtomicU16,
    /// Where a custom client's redirect led, if it followed one.
    pub(super) redirected: std::sync::Mutex<Option<String>>,
    /// The tokens the pre hook sent.
    pub(super) sent: std::sync::Mutex<Sent>,
    /// How many more values the reply's opaque fields may hold
    /// ([`MAX_OPAQUE_VALUES`](super::MAX_OPAQUE_VALUES)).
    pub(super) opaque_left: AtomicUsize,
}

/// The tokens an attempt sent: the application or client token, and the user token.
pub(super) type Sent = [Option<SecretString>; 2];

impl Attempt {
    fn set_redirected(&self, to: String) {
        *self
            .redirected
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(to);
    }
}

tokio::task_local! {
    // Boxed: a task-local is swapped in and out of its slot on every poll of the call,
    // a dozen times per call, and a pointer is cheaper to swap than the whole state.
    pub(super) static ATTEMPT: Box<Attempt>;
}
