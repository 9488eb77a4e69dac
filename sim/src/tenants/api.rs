//! The admin routes of the tenants (`spec/sandbox.yaml`, tag `tenants`), on the default
//! tenant's admin API only, behind the simulator's own admin token: create, list, read,
//! delete.

use std::{sync::Arc, time::Duration};

use axum::{
    http::{Method, StatusCode, header},
    response::Response,
};
use licensing_host::{
    ADMIN_PREFIX,
    pages::{AdminRequest, AdminRoute},
};

use super::{Entry, Registry, TenantError, TenantOptions};
use crate::{
    sandbox::{
        AdminError,
        client::types::{self as a, TenantRegion},
        json, parse, seed,
    },
    state::Region,
};

type Handler = fn(&Registry, AdminRequest) -> Result<Response, AdminError>;

pub(super) fn routes(registry: &Arc<Registry>) -> Vec<AdminRoute> {
    let table: [(Method, &str, Handler); 4] = [
        (Method::POST, "/tenants", create),
        (Method::GET, "/tenants", list),
        (Method::GET, "/tenants/{id}", get),
        (Method::DELETE, "/tenants/{id}", delete),
    ];
    table
        .into_iter()
        .map(|(method, path, handler)| {
            let registry = Arc::clone(registry);
            AdminRoute {
                path: format!("{ADMIN_PREFIX}{path}"),
                method,
                handler: Arc::new(move |req| {
                    let response =
                        handler(&registry, req).unwrap_or_else(AdminError::into_response);
                    Box::pin(async move { response })
                }),
            }
        })
        .collect()
}

fn region(region: Region) -> TenantRegion {
    match region {
        Region::Domestic => TenantRegion::Domestic,
        Region::Singapore => TenantRegion::Singapore,
    }
}

fn count(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// The tenant as `createTenant` and `getTenant` answer it, its URL on the address the
/// request was sent to.
fn shown(registry: &Registry, req: &AdminRequest, entry: &Entry) -> a::Tenant {
    let host = req
        .parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.parts.uri.authority().map(|a| a.to_string()))
        .unwrap_or_else(|| "localhost".to_string());
    let path = super::prefix(&entry.id);
    a::Tenant {
        id: entry.id.clone(),
        name: entry.name.clone(),
        url: format!("{}://{host}{path}", registry.access.scheme),
        path,
        tokens: a::TenantTokens {
            app: entry.tokens.app.clone(),
            client: entry.tokens.client.clone(),
            user: entry.tokens.user.clone(),
            admin: entry.tokens.admin.clone(),
        },
        ttl: count(entry.ttl.as_secs()),
        created_at: entry.created_at,
        region: region(entry.unit.db.region()),
        seeded: None,
    }
}

impl From<TenantError> for AdminError {
    fn from(e: TenantError) -> Self {
        match e {
            TenantError::Full { .. } => AdminError {
                status: StatusCode::CONFLICT,
                field: None,
                message: e.to_string(),
            },
            TenantError::Invalid { field, message } => AdminError {
                status: StatusCode::BAD_REQUEST,
                field,
                message,
            },
            TenantError::Io(_) => AdminError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                field: None,
                message: e.to_string(),
            },
        }
    }
}

fn create(registry: &Registry, req: AdminRequest) -> Result<Response, AdminError> {
    let body = req.body.as_ref().map_err(|e| AdminError::bad(e.clone()))?;
    // No body is every default; any other must be the JSON of one (white space is not).
    let spec: a::TenantSpec = if body.is_empty() {
        a::TenantSpec::default()
    } else {
        parse(body)?
    };
    let seed = spec
        .seed
        .map(|name| {
            seed::builtin(&name.to_string())
                .ok_or_else(|| AdminError::field("seed", format!("no built-in seed {name}")))
        })
        .transpose()?;
    let options = TenantOptions {
        name: spec.name.map(String::from),
        seed,
        region: spec.region.map(|r| match r {
            TenantRegion::Domestic => Region::Domestic,
            TenantRegion::Singapore => Region::Singapore,
        }),
        ttl: spec.ttl.map(|s| Duration::from_secs(s.get())),
    };
    let (entry, seeded) = registry.create(options)?;
    let mut tenant = shown(registry, &req, &entry);
    tenant.seeded = seeded;
    Ok(json(StatusCode::CREATED, &tenant))
}

fn list(registry: &Registry, _: AdminRequest) -> Result<Response, AdminError> {
    let tenants = registry
        .list()
        .iter()
        .map(|entry| {
            let (enterprises, assets, members) = entry.unit.db.counts();
            a::TenantSummary {
                id: entry.id.clone(),
                name: entry.name.clone(),
                path: super::prefix(&entry.id),
                ttl: count(entry.ttl.as_secs()),
                created_at: entry.created_at,
                idle_ms: count(registry.idle_ms(entry)),
                region: region(entry.unit.db.region()),
                enterprises: count(enterprises),
                assets: count(assets),
                members: count(members),
            }
        })
        .collect();
    Ok(json(
        StatusCode::OK,
        &a::TenantList {
            tenants,
            max: count(registry.max),
        },
    ))
}

fn id(req: &AdminRequest) -> &str {
    req.params.get("id").map_or("", String::as_str)
}

fn no_tenant(id: &str) -> AdminError {
    // The id is echoed only when it has an id's shape: nothing else from the path.
    if super::is_id(id) {
        AdminError::not_found(format!("no tenant {id}"))
    } else {
        AdminError::not_found("no tenant has that id (32 lowercase hexadecimal digits)")
    }
}

fn get(registry: &Registry, req: AdminRequest) -> Result<Response, AdminError> {
    // Read without counting as a use: an operator looking does not keep it alive.
    registry.reap();
    let entry = registry
        .entries()
        .get(id(&req))
        .cloned()
        .ok_or_else(|| no_tenant(id(&req)))?;
    Ok(json(StatusCode::OK, &shown(registry, &req, &entry)))
}

fn delete(registry: &Registry, req: AdminRequest) -> Result<Response, AdminError> {
    let deleted = registry.delete(id(&req)).map_err(|e| AdminError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        field: None,
        message: format!("the tenant's files could not be removed: {e}"),
    })?;
    if !deleted {
        return Err(no_tenant(id(&req)));
    }
    let mut response = Response::new(axum::body::Body::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}
