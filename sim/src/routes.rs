//! The routes: one per operation of the generated table, each behind the shared gate
//! ([`http::gate`]) and answering with the operation's generated reply type. Paths,
//! methods and reply types come from the spec through `licensing_sdk::for_each_operation!`;
//! an operation added to a spec without a handler here fails to compile.
//!
//! A request to an operation is found in [`Operations`] and goes straight to its gate;
//! everything else (the admin API, a wrong method, an unknown path, `HEAD`) goes through
//! the axum router, which has the operations too, so it answers `405` and `404` as usual.

use std::{collections::HashMap, sync::Arc};

use axum::{
    Router,
    extract::{Path, Request, rejection::PathRejection},
    http::Method,
    routing::{MethodFilter, MethodRouter, on},
};
use licensing_sdk::operations::Operation;

use super::{
    Shared,
    http::{self, Answer, Call, Failure, InvalidPath, Reply},
    member, order,
    server::App,
};

/// An operation's handler: reads the call, applies the rules, returns the reply data.
type Handler<R> = fn(&Shared, &Call) -> Result<<R as Reply>::Data, Failure>;

/// Largest request body accepted. The documents show no payload bound; a 10,000-order
/// batch is ~40 MB.
pub(crate) const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// What the gate of one route needs: the shared state, the operation's record, how to
/// answer a failure with the operation's own reply type, and how to run the operation.
#[derive(Clone)]
pub(crate) struct Route {
    pub shared: Arc<Shared>,
    pub op: &'static Operation,
    pub error: fn(&'static Operation, Failure) -> Answer,
    /// The operation's handler, run by [`Shared::run`], its result in the envelope.
    pub answer: fn(&Shared, &Call) -> Answer,
}

/// The operations by path and method.
pub(crate) struct Operations {
    paths: matchit::Router<Vec<(Method, Route)>>,
}

impl Operations {
    /// The route a request is for, with its path parameters (percent-decoded); `None`
    /// for a request no operation has (with its method).
    pub fn find(&self, method: &Method, path: &str) -> Option<(&Route, PathParams)> {
        let found = self.paths.at(path).ok()?;
        let (_, route) = found.value.iter().find(|(m, _)| m == method)?;
        let params = found
            .params
            .iter()
            .map(|(name, value)| {
                let value = percent_encoding::percent_decode_str(value)
                    .decode_utf8()
                    .map_err(|_| InvalidPath)?;
                Ok((name.to_string(), value.into_owned()))
            })
            .collect();
        Some((route, params))
    }

    /// The table of `(path, method, route)`; panics, naming the path, on a path matchit
    /// cannot route (one the spec checks would have refused).
    fn new(routes: Vec<(&'static str, Method, Route)>) -> Self {
        let mut by_path: Vec<(&str, Vec<(Method, Route)>)> = Vec::new();
        for (path, method, route) in routes {
            match by_path.iter_mut().find(|(p, _)| *p == path) {
                Some((_, methods)) => methods.push((method, route)),
                None => by_path.push((path, vec![(method, route)])),
            }
        }
        let mut paths = matchit::Router::new();
        for (path, methods) in by_path {
            paths
                .insert(path, methods)
                .unwrap_or_else(|e| panic!("the operation path {path} cannot be routed: {e}"));
        }
        Self { paths }
    }
}

/// An operation's path parameters, or the failure to decode one.
pub(crate) type PathParams = Result<HashMap<String, String>, InvalidPath>;

/// The route of one operation on the axum router, for what [`Operations`] does not take.
fn fallback(route: Route, filter: MethodFilter) -> MethodRouter<Arc<Shared>> {
    on(
        filter,
        move |path: Result<Path<HashMap<String, String>>, PathRejection>, req: Request| async move {
            let path = path.map(|Path(p)| p).map_err(|_| InvalidPath);
            let (parts, body) = req.into_parts();
            let body = axum::body::to_bytes(body, MAX_BODY_BYTES)
                .await
                .map_err(|e| e.to_string());
            http::gate(&route, path, parts, body).await
        },
    )
}

/// Runs an operation's handler as [`Shared::run`] orders it (mutating calls one at a time,
/// each durable before the reply) and puts its result in the envelope.
fn answer<R: Reply>(
    shared: &Shared,
    op: &'static Operation,
    call: &Call,
    handler: Handler<R>,
) -> Answer {
    http::respond::<R>(op, shared.run(op, call, handler))
}

macro_rules! router {
    ($( ($service:ident, $builder:ident, $handler:ident, $method:ident, $path:literal,
         $reply:path, $op:path); )*) => {
        /// Both services, and the admin API on the router.
        pub(crate) fn app(shared: Arc<Shared>) -> App {
            let mut router = Router::new();
            let mut operations = Vec::new();
            $(
                let route = Route {
                    shared: Arc::clone(&shared),
                    op: &$op,
                    error: |op, failure| http::respond::<$reply>(op, Err(failure)),
                    answer: |shared, call| answer::<$reply>(shared, &$op, call, $service::$handler),
                };
                operations.push(($path, Method::$method, route.clone()));
                router = router.route($path, fallback(route, MethodFilter::$method));
            )*
            let router = router
                .merge(super::sandbox::router(Arc::clone(&shared)))
                .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
                .with_state(shared);
            App { operations: Some(Arc::new(Operations::new(operations))), router }
        }
    };
}

licensing_sdk::for_each_operation!(router);

macro_rules! replayer {
    ($( ($service:ident, $builder:ident, $handler:ident, $method:ident, $path:literal,
         $reply:path, $op:path); )*) => {
        /// Runs the handler of operation `id` on a call read back from the state file's log,
        /// as the router ran it (the gate's checks passed then); `None` for an operation
        /// this simulator does not have.
        pub(crate) fn replay(shared: &Shared, id: &str, call: &Call) -> Option<Result<(), Failure>> {
            $(
                if $op.id == id {
                    return Some($service::$handler(shared, call).map(|_| ()));
                }
            )*
            None
        }
    };
}

licensing_sdk::for_each_operation!(replayer);
