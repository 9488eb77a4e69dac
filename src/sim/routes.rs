//! The 19 operations: method, path, handler and generated reply type, in one table.

use std::sync::Arc;

use axum::{
    Router,
    extract::{MatchedPath, Request, State},
    http::Method,
    middleware,
    response::Response,
    routing::{MethodFilter, MethodRouter, on},
};

use super::{
    Shared,
    http::{self, Call, Failure, Reply, Service},
    member, order,
};
use crate::{member::types as m, order::types as o};

/// An operation's handler: reads the call, applies the rules, returns the reply data.
type Handler<R> = fn(&Shared, &Call) -> Result<<R as Reply>::Data, Failure>;

/// A route whose handler's result becomes the generated envelope `R`.
/// Largest request body accepted.
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

fn route<R>(filter: MethodFilter, handler: Handler<R>) -> MethodRouter<Arc<Shared>>
where
    R: Reply + 'static,
{
    on(
        filter,
        move |State(shared): State<Arc<Shared>>, call: Call| async move {
            http::respond::<R>(handler(&shared, &call))
        },
    )
}

macro_rules! operations {
    ($($op:ident: $method:ident $path:literal => $handler:path, $reply:ty;)*) => {
        /// An operation of either service.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Op { $($op),* }

        impl Op {
            const ALL: &[Op] = &[$(Op::$op),*];

            fn method(self) -> Method {
                match self { $(Op::$op => Method::$method),* }
            }

            fn path(self) -> &'static str {
                match self { $(Op::$op => $path),* }
            }

            /// The error envelope of this operation's reply type.
            pub fn error_response(self, failure: Failure) -> Response {
                match self { $(Op::$op => http::respond::<$reply>(Err(failure))),* }
            }
        }

        /// Both services on one router, every route behind [`http::gate`].
        pub(crate) fn router(shared: Arc<Shared>) -> Router {
            let mut router = Router::new();
            $(
                router = router.route(
                    $path,
                    route::<$reply>(MethodFilter::$method, $handler),
                );
            )*
            router
                // `route_layer`: a wrong method still gets 405, an unknown path 404.
                .route_layer(middleware::from_fn_with_state(Arc::clone(&shared), http::gate))
                // The documents show no payload bound; a 10,000-order batch is ~40 MB.
                .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
                .with_state(shared)
        }
    };
}

operations! {
    BindEnterprise: POST "/order/api/order/v1/enterprise/user/bind" => order::bind_enterprise, o::BindEnterpriseReply;
    CreateEnterprise: POST "/order/api/order/v1/enterprise/user/create" => order::create_enterprise, o::CreateEnterpriseReply;
    QueryEnterprise: GET "/order/api/order/v1/enterprise/user/query" => order::query_enterprise, o::QueryEnterpriseReply;
    UpdateEnterprise: POST "/order/api/order/v1/enterprise/user/update" => order::update_enterprise, o::UpdateEnterpriseReply;
    BatchOrder: POST "/order/api/order/v1/licenseOrder/batchOrder" => order::batch_order, o::BatchOrderReply;
    DisableLocks: POST "/order/api/order/v1/asset/lock" => order::disable_locks, o::DisableLocksReply;
    EnableLocks: POST "/order/api/order/v1/asset/unlock" => order::enable_locks, o::EnableLocksReply;
    ListVirtualAssets: GET "/order/api/order/v1/asset/{enterpriseGlobalId}/list" => order::list_virtual_assets, o::ListVirtualAssetsReply;
    AllocateShellNums: POST "/order/api/order/v1/shellnums" => order::allocate_shell_nums, o::AllocateShellNumsReply;
    AddMembers: POST "/me/api/v1/enterprise/{enterpriseGlobalId}/member" => member::add_members, m::AddMembersReply;
    EditMember: PUT "/me/api/v1/enterprise/{enterpriseGlobalId}/member/{memberGlobalId}" => member::edit_member, m::EditMemberReply;
    DeleteMember: DELETE "/me/api/v1/enterprise/{enterpriseGlobalId}/member/{memberGlobalId}" => member::delete_member, m::DeleteMemberReply;
    ResetMemberPassword: PUT "/me/api/v1/enterprise/{enterpriseGlobalId}/member/{memberGlobalId}/resetPassword" => member::reset_member_password, m::ResetMemberPasswordReply;
    ListMembers: GET "/me/api/v1/enterprise/{enterpriseGlobalId}/members" => member::list_members, m::ListMembersReply;
    ListAssetNums: GET "/me/api/v1/enterprise/{enterpriseGlobalId}/asset/assetNums" => member::list_asset_nums, m::ListAssetNumsReply;
    ListAssetProducts: GET "/me/api/v1/enterprise/asset/{assetId}/merchandiseProducts" => member::list_asset_products, m::ListAssetProductsReply;
    ListLentLocks: GET "/me/api/v1/enterprise/{enterpriseGlobalId}/asset/borrowUsbKeys" => member::list_lent_locks, m::ListLentLocksReply;
    ConfigureMemberAssets: POST "/me/api/v1/enterprise/member/{memberGlobalId}/privileges" => member::configure_member_assets, m::ConfigureMemberAssetsReply;
    LendAssets: POST "/me/api/v1/enterprise/member/{memberGlobalId}/borrow" => member::lend_assets, m::LendAssetsReply;
}

impl Op {
    /// The operation a routed request is for.
    pub fn of(req: &Request) -> Option<Op> {
        let path = req.extensions().get::<MatchedPath>()?.as_str();
        // axum answers HEAD with the GET route.
        let method = match req.method() {
            &Method::HEAD => Method::GET,
            m => m.clone(),
        };
        Op::ALL
            .iter()
            .copied()
            .find(|op| op.path() == path && op.method() == method)
    }

    /// The service the operation belongs to.
    pub fn service(self) -> Service {
        if self.path().starts_with("/order/") {
            Service::Order
        } else {
            Service::Member
        }
    }

    /// Whether the member center document lists `80001` (user center exception) for it.
    pub fn user_center(self) -> bool {
        matches!(
            self,
            Op::AddMembers
                | Op::EditMember
                | Op::ResetMemberPassword
                | Op::DeleteMember
                | Op::ListMembers
        )
    }
}
