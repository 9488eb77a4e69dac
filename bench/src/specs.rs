//! The two specs, read through the spec model: where the loaded operations live, and what
//! the stub servers answer.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use licensing_spec::openapiv3::OpenAPI;

/// One service's spec.
pub struct Spec {
    /// Relative to the repository root, for messages.
    pub file: &'static str,
    pub api: OpenAPI,
}

/// Both specs, the order service's first.
pub fn load_all(root: &Path) -> Result<Vec<Spec>> {
    ["spec/order.yaml", "spec/member.yaml"]
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(root.join(file))
                .with_context(|| format!("cannot read {file}"))?;
            let api = licensing_spec::load(&text).map_err(|e| anyhow!("{file}: {e}"))?;
            Ok(Spec { file, api })
        })
        .collect()
}

/// `(METHOD, path template)` of the operation with this `operationId`.
pub fn operation(specs: &[Spec], id: &str) -> Result<(String, String)> {
    specs
        .iter()
        .flat_map(|spec| spec.api.operations())
        .find(|(_, _, op)| op.operation_id.as_deref() == Some(id))
        .map(|(path, method, _)| (method.to_uppercase(), path.to_string()))
        .ok_or_else(|| anyhow!("no operation `{id}` in the specs"))
}
