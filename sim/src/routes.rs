//! The router: one route per operation of the generated table, each behind the shared
//! gate ([`http::gate`]) and answering with the operation's generated reply type. Paths,
//! methods and reply types come from the spec through `licensing_sdk::for_each_operation!`;
//! an operation added to a spec without a handler here fails to compile.

use std::sync::Arc;

use axum::{
    Router,
    extract::Request,
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

/// What the gate of one route needs: the shared state, the operation's record, how to
/// answer a failure with the operation's own reply type, and how to run the operation.
#[derive(Clone)]
pub(crate) struct Route {
    pub shared: Arc<Shared>,
    pub op: &'static Operation,
    pub error: fn(&'static Operation, Failure) -> Response,
    /// The operation's handler, run by [`Shared::run`], its result in the envelope.
    pub answer: fn(&Shared, &Call) -> Response,
}

/// One operation's route: its gate, which runs the operation. A wrong method still gets
/// 405, an unknown path 404.
fn route<R>(
    shared: &Arc<Shared>,
    op: &'static Operation,
    filter: MethodFilter,
    answer: fn(&Shared, &Call) -> Response,
) -> MethodRouter<Arc<Shared>>
where
    R: Reply + 'static,
{
    let route = Route {
        shared: Arc::clone(shared),
        op,
        error: |op, failure| http::respond::<R>(op, Err(failure)),
        answer,
    };
    on(filter, move |req: Request| http::gate(route, req))
}

/// Runs an operation's handler as [`Shared::run`] orders it (mutating calls one at a time,
/// each durable before the reply) and puts its result in the envelope.
fn answer<R: Reply>(
    shared: &Shared,
    op: &'static Operation,
    call: &Call,
    handler: Handler<R>,
) -> Response {
    http::respond::<R>(op, shared.run(op, call, handler))
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
                    route::<$reply>(
                        &shared,
                        &$op,
                        MethodFilter::$method,
                        |shared, call| answer::<$reply>(shared, &$op, call, $service::$handler),
                    ),
                );
            )*
            router
                .merge(super::sandbox::router(Arc::clone(&shared)))
                .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
                .with_state(shared)
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
