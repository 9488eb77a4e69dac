//! Loading the OpenAPI specs through the spec model (`licensing-spec`): the typed
//! `openapiv3` model (the one the build script reads) next to the raw JSON value of the
//! same YAML, which keeps what the typed model drops (extensions beside a `$ref`, unknown
//! keywords).

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use openapiv3::{OpenAPI, ReferenceOr, Schema};
use serde_json::Value;

/// One service of the SDK and the spec that describes it.
pub struct Service {
    /// Directory name under `schemas/` and the service's name in the index.
    pub name: &'static str,
    /// Path of the spec, relative to the repository root.
    pub spec: &'static str,
}

/// The services in export order (the build script's order).
pub const SERVICES: &[Service] = &[
    Service {
        name: "order",
        spec: "spec/order.yaml",
    },
    Service {
        name: "member",
        spec: "spec/member.yaml",
    },
];

pub use licensing_spec::SCHEMA_REF_PREFIX;

/// A parsed spec.
pub struct Spec {
    pub service: &'static Service,
    pub api: OpenAPI,
    pub raw: Value,
}

impl Spec {
    pub fn load(root: &Path, service: &'static Service) -> Result<Spec> {
        let path = root.join(service.spec);
        let text =
            fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        Spec::parse(service, &text)
    }

    /// Parses the text of `service`'s spec.
    pub fn parse(service: &'static Service, text: &str) -> Result<Spec> {
        let api = licensing_spec::load(text).map_err(|e| anyhow!("{}: {e}", service.spec))?;
        let raw = licensing_spec::raw(text).map_err(|e| anyhow!("{}: {e}", service.spec))?;
        Ok(Spec { service, api, raw })
    }

    pub fn load_all(root: &Path) -> Result<Vec<Spec>> {
        SERVICES.iter().map(|s| Spec::load(root, s)).collect()
    }

    /// The names of the component schemas, in spec order.
    pub fn schema_names(&self) -> impl Iterator<Item = &str> {
        self.api
            .components
            .iter()
            .flat_map(|c| c.schemas.keys())
            .map(String::as_str)
    }

    /// A component schema, typed and raw.
    pub fn schema(&self, name: &str) -> Result<(&ReferenceOr<Schema>, &Value)> {
        let typed = self
            .api
            .components
            .as_ref()
            .and_then(|c| c.schemas.get(name))
            .ok_or_else(|| anyhow!("{}: no component schema `{name}`", self.service.spec))?;
        let raw = self
            .raw
            .pointer(&format!("/components/schemas/{}", escape(name)))
            .ok_or_else(|| anyhow!("{}: no raw component schema `{name}`", self.service.spec))?;
        Ok((typed, raw))
    }

    /// `spec/x.yaml#/a/b`, for messages.
    pub fn location(&self, pointer: &str) -> String {
        format!("{}#{pointer}", self.service.spec)
    }
}

/// The component name a `$ref` points at, or an error for any other kind of reference.
pub fn schema_ref_name<'a>(spec: &Spec, reference: &'a str, at: &str) -> Result<&'a str> {
    reference
        .strip_prefix(SCHEMA_REF_PREFIX)
        .filter(|name| !name.contains('/'))
        .ok_or_else(|| {
            anyhow!(
                "{}: `$ref: {reference}` is not a reference to a component schema",
                spec.location(at)
            )
        })
}

/// Escapes one JSON Pointer reference token (RFC 6901).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
