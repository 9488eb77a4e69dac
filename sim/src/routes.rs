//! The router: one route per operation of the generated table, each behind the shared
//! gate ([`http::gate`]) and answering with the operation's generated reply type. Paths,
//! methods and reply types come from the spec through `licensing_sdk::for_each_operation!`;
//! an operation added to a spec without a handler here fails to compile.

use std::sync::Arc;

use axum::{
    Router,
    extract::State,
    middleware,
    response::Response,
    routing::{MethodFilter, MethodRouter, on},
};
use licensing_sdk::operations::Operation;

use super::{
    Shared,
    http::{self, Call, Failure, Reply},
    member, order,
};

/// An operation's handler: reads the call, applies the rules, returns the reply data.
type Handler<R> = fn(&Shared, &Call) -> Result<<R as Reply>::Data, Failure>;

/// Largest request body accepted. The documents show no payload bound; a 10,000-order
/// batch is ~40 MB.
pub(crate) const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// What the gate of one route needs: the shared state, the operation's record, and how
/// to answer a failure with the operation's own reply type.
#[derive(Clone)]
pub(crate) struct Route {
    pub shared: Arc<Shared>,
    pub op: &'static Operation,
    pub error: fn(&'static Operation, Failure) -> Response,
}

fn route<R>(
    shared: &Arc<Shared>,
    op: &'static Operation,
    filter: MethodFilter,
    handler: Handler<R>,
) -> MethodRouter<Arc<Shared>>
where
    R: Reply + 'static,
{
    let gate = Route {
        shared: Arc::clone(shared),
        op,
        error: |op, failure| http::respond::<R>(op, Err(failure)),
    };
    on(
        filter,
        move |State(shared): State<Arc<Shared>>, call: Call| async move {
            http::respond::<R>(op, handler(&shared, &call))
        },
    )
    // `route_layer`: a wrong method still gets 405, an unknown path 404.
    .route_layer(middleware::from_fn_with_state(gate, http::gate))
}

macro_rules! router {
    ($( ($service:ident, $builder:ident, $handler:ident, $method:ident, $path:literal,
         $reply:path, $op:path); )*) => {
        /// Both services on one router.
        pub(crate) fn router(shared: Arc<Shared>) -> Router {
            let mut router = Router::new();
            $(
                router = router.route(
                    $path,
                    route::<$reply>(&shared, &$op, MethodFilter::$method, $service::$handler),
                );
            )*
            router
                .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
                .with_state(shared)
        }
    };
}

licensing_sdk::for_each_operation!(router);
