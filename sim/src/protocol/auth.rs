//! The credentials each service documents, checked before anything else.

use axum::http::HeaderMap;
use licensing_host::admin::bearer;
use licensing_sdk::ErrorCode;

use crate::ops::{Failure, Service};

/// The tokens the services (and the admin API) accept.
#[derive(Clone)]
pub(crate) struct Credentials {
    pub app_token: String,
    pub client_token: String,
    pub user_token: String,
}

/// Tokens stay out of logs, as the SDK keeps its own.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials([REDACTED])")
    }
}

fn header_value<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

/// The credentials each service documents. The order service's document lists no code
/// for a bad token, so it answers `13004` there (a required header failed validation);
/// the member center answers `60000` for the application token, `60005` for the user
/// token and `70001` when the two copies of the application token disagree.
pub(crate) fn authenticate(
    config: &Credentials,
    service: Service,
    headers: &HeaderMap,
) -> Result<(), Failure> {
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
