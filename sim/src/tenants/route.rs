//! Which sandbox a request is for: a path under `/t/{id}/` goes to tenant `id`'s, read as
//! the path after the prefix; every other path to the default tenant's, as it was before
//! tenants.

use std::{future::Future, sync::Arc};

use axum::{
    body::Body,
    http::{StatusCode, Uri, request::Parts, uri::PathAndQuery},
    response::Response,
};
use licensing_host::{Handler, pages::bare, server::ReadBody};

use super::{Entry, Registry};
use crate::protocol::App;

/// What every tenant's path starts with.
const PREFIX: &str = "/t/";

/// The tenant a path names and the path under its prefix (`/t/ID/me/api/v1/x` →
/// `ID`, `/me/api/v1/x`); `None` for a path outside every tenant's.
fn split(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(PREFIX)?;
    Some(rest.split_at(rest.find('/').unwrap_or(rest.len())))
}

/// The server's handler: the default tenant's router, and each tenant's behind its prefix.
#[derive(Clone, Debug)]
pub(crate) struct Router {
    pub default: App,
    pub registry: Arc<Registry>,
}

/// Where a request goes.
enum Target<'p> {
    Default,
    /// A live tenant, and the path under its prefix.
    Tenant(Arc<Entry>, &'p str),
    /// A tenant's prefix naming none: answered as an unknown path, whatever follows.
    Nowhere,
}

impl Router {
    fn target<'p>(&self, path: &'p str) -> Target<'p> {
        let Some((id, under)) = split(path) else {
            return Target::Default;
        };
        match self.registry.get(id) {
            Some(entry) if !under.is_empty() => Target::Tenant(entry, under),
            _ => Target::Nowhere,
        }
    }

    async fn serve(&self, mut parts: Parts, body: ReadBody) -> Response<Body> {
        let path = parts.uri.path();
        match self.target(path) {
            Target::Default => self.default.handle(parts, body).await,
            Target::Nowhere => bare(StatusCode::NOT_FOUND, None),
            Target::Tenant(entry, under) => {
                let Some(uri) = under_prefix(&parts.uri, under) else {
                    return bare(StatusCode::NOT_FOUND, None);
                };
                parts.uri = uri;
                entry.unit.app.handle(parts, body).await
            }
        }
    }
}

/// `uri` with its path replaced by `path` (the part under a tenant's prefix), its query
/// kept: what the tenant's router, its journal and its handlers read.
fn under_prefix(uri: &Uri, path: &str) -> Option<Uri> {
    let path_and_query = match uri.query() {
        Some(query) => PathAndQuery::try_from(format!("{path}?{query}")),
        None => PathAndQuery::try_from(path),
    }
    .ok()?;
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(path_and_query);
    Uri::from_parts(parts).ok()
}

impl Handler for Router {
    fn handle(&self, parts: Parts, body: ReadBody) -> impl Future<Output = Response<Body>> + Send {
        self.serve(parts, body)
    }

    /// An unknown tenant's request is answered before its body is read.
    fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
        match self.target(parts.uri.path()) {
            Target::Default => self.default.refuse(parts),
            Target::Nowhere => Some(bare(StatusCode::NOT_FOUND, None)),
            Target::Tenant(entry, under) => entry.unit.app.refuse_at(parts, under),
        }
    }

    fn reply_refusable(&self, parts: &Parts) -> bool {
        let path = parts.uri.path();
        match split(path) {
            None => self.default.reply_refusable(parts),
            Some((_, under)) => self.default.reply_refusable_at(parts, under),
        }
    }

    fn reply_refused(&self, cause: &str) -> Response<Body> {
        App::reply_refused(cause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_split_at_the_first_slash_after_the_id() {
        let id = "0123456789abcdef0123456789abcdef";
        let path = format!("/t/{id}/me/api/v1/members?x=1");
        assert_eq!(split(&path), Some((id, "/me/api/v1/members?x=1")));
        assert_eq!(split("/t/"), Some(("", "")));
        assert_eq!(split("/t//x"), Some(("", "/x")));
        assert_eq!(
            split("/t/../__sandbox/v1/tenants"),
            Some(("..", "/__sandbox/v1/tenants"))
        );
        assert_eq!(split("/order/api/order/v1/shellnums"), None);
        assert_eq!(split("/tenants"), None);
        let uri: Uri = "http://h/t/x/order/api?g_nonce=1".parse().unwrap();
        assert_eq!(
            under_prefix(&uri, "/order/api").unwrap().to_string(),
            "http://h/order/api?g_nonce=1"
        );
    }
}
