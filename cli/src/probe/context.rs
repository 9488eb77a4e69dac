//! What a run works with: the sender, the specs, the credentials, the ids it was given,
//! and the requests built from the spec for an operation.

use std::collections::BTreeMap;

use licensing_sdk::operations::Service;
use licensing_spec::Op;
use serde_json::Value;

use super::{
    http::{Answer, Http, Request, Spent},
    plan::{Credential, Place, Spec},
};

/// The tokens a run sends (from the profile, the environment or flags, as every command).
#[derive(Clone, Default)]
pub struct Creds {
    pub app_token: Option<String>,
    pub client_token: Option<String>,
    pub user_token: Option<String>,
}

impl std::fmt::Debug for Creds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Creds([REDACTED])")
    }
}

impl Creds {
    /// The token a credential header carries.
    pub fn value(&self, service: Service, credential: &Credential) -> Option<&str> {
        let header = credential.header.to_ascii_lowercase();
        match (service, header.as_str()) {
            (Service::Order, _) => self.app_token.as_deref(),
            (Service::Member, "usertoken") => self.user_token.as_deref(),
            (Service::Member, _) => self.client_token.as_deref(),
        }
    }
}

/// The ids a run was given: the enterprises and assets it may write to (and reads),
/// and the channel customer its enterprise query asks for.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Inputs {
    pub enterprises: Vec<String>,
    pub assets: Vec<String>,
    #[serde(default)]
    pub channel_code: Option<String>,
    #[serde(default)]
    pub channel_customer_id: Option<String>,
}

/// A run against one deployment.
pub struct Probe<'a> {
    pub http: &'a Http,
    pub specs: &'a [Spec],
    pub creds: &'a Creds,
    pub inputs: &'a Inputs,
    /// Values of path parameters read from earlier replies (`assetId`).
    pub found: BTreeMap<String, String>,
}

/// The most values kept from replies, and the deepest a reply is searched for them.
const MAX_FOUND: usize = 64;
const MAX_FOUND_DEPTH: usize = 8;

impl<'a> Probe<'a> {
    /// The spec of a service.
    pub fn spec(&self, service: Service) -> &'a Spec {
        self.specs
            .iter()
            .find(|s| s.service == service)
            .expect("both specs are read")
    }

    /// A request to `op` with its required parameters filled (`values` first, then what
    /// the run was given or has read, then the paging's first page), every credential,
    /// a fresh `g_nonce` and, on the order service (or with a body), `Content-Type`.
    /// `Err` names a parameter the run has no value for.
    pub fn request(
        &self,
        spec: &Spec,
        op: &Op,
        values: &[(&str, String)],
        body: Option<Vec<u8>>,
    ) -> Result<Request, String> {
        let mut path_values = BTreeMap::new();
        let mut query = Vec::new();
        for param in spec.params(op) {
            if param.name == "g_nonce" || param.place == Place::Other {
                continue;
            }
            let given = values
                .iter()
                .find(|(n, _)| *n == param.name)
                .map(|(_, v)| v.clone());
            let value = match given {
                Some(v) => v,
                None if !param.required => continue,
                None => self
                    .default_value(op, &param.name, &param.values)
                    .ok_or_else(|| {
                        format!(
                            "needs `{}`, which the run has no value for{}",
                            param.name,
                            hint(&param.name)
                        )
                    })?,
            };
            match param.place {
                Place::Path => {
                    path_values.insert(param.name.clone(), value);
                }
                _ => query.push((param.name.clone(), value)),
            }
        }
        let mut segments = Vec::new();
        for part in op.path.split('/').filter(|p| !p.is_empty()) {
            match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                Some(name) => segments.push(
                    path_values
                        .get(name)
                        .cloned()
                        .ok_or_else(|| format!("needs the path parameter `{name}`"))?,
                ),
                None => segments.push(part.to_string()),
            }
        }
        query.push(("g_nonce".to_string(), licensing_sdk::runtime::nonce()));
        let mut headers = vec![("Accept".to_string(), "application/json".to_string())];
        for credential in spec.credentials(op) {
            let token = self.creds.value(spec.service, &credential).ok_or_else(|| {
                format!(
                    "needs the token for `{}` (LICENSING_{}_TOKEN)",
                    credential.header,
                    token_var(spec.service, &credential)
                )
            })?;
            let value = if credential.bearer {
                format!("Bearer {token}")
            } else {
                token.to_string()
            };
            headers.push((credential.header, value));
        }
        if spec.service == Service::Order || body.is_some() {
            headers.push(("Content-Type".to_string(), "application/json".to_string()));
        }
        Ok(Request {
            service: spec.service,
            operation: op.id.clone(),
            method: reqwest::Method::from_bytes(op.method.as_bytes())
                .unwrap_or(reqwest::Method::GET),
            segments,
            query,
            headers,
            body,
        })
    }

    fn default_value(&self, op: &Op, name: &str, values: &[String]) -> Option<String> {
        if let Some(paging) = &op.pagination {
            if name == paging.page_param {
                return Some("1".into());
            }
            if name == paging.size_param {
                return Some("10".into());
            }
        }
        let given = match name {
            "enterpriseGlobalId" => self.inputs.enterprises.first().cloned(),
            "channelCode" => self.inputs.channel_code.clone(),
            "channelCustomerId" => self.inputs.channel_customer_id.clone(),
            _ => None,
        };
        given
            .or_else(|| self.found.get(name).cloned())
            .or_else(|| values.first().cloned())
    }

    /// Sends a request; a spent total reads as a request not sent.
    pub async fn send(&self, request: &Request) -> Answer {
        match self.http.send(request).await {
            Ok(answer) => answer,
            Err(Spent(n)) => Answer::NotSent(format!(
                "the run's total of {n} requests is spent (--max-requests)"
            )),
        }
    }

    /// Sends an undo, or a read an undo needs, whatever stopped the run.
    pub async fn send_undo(&self, request: &Request) -> Answer {
        self.http.send_undo(request).await
    }

    /// Keeps the values of path parameters that a reply names (the first of each).
    pub fn learn(&mut self, json: &Value) {
        let wanted: Vec<String> = self
            .specs
            .iter()
            .flat_map(|s| s.ops.iter().flat_map(move |op| s.params(op)))
            .filter(|p| p.place == Place::Path)
            .map(|p| p.name)
            .collect();
        learn(&mut self.found, &wanted, json, 0);
    }
}

fn learn(found: &mut BTreeMap<String, String>, wanted: &[String], json: &Value, depth: usize) {
    if depth > MAX_FOUND_DEPTH || found.len() >= MAX_FOUND {
        return;
    }
    match json {
        Value::Object(map) => {
            for (key, value) in map {
                if let Value::String(text) = value
                    && wanted.contains(key)
                    && !text.is_empty()
                    && text.len() <= 256
                {
                    found.entry(key.clone()).or_insert_with(|| text.clone());
                }
                learn(found, wanted, value, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items.iter().take(16) {
                learn(found, wanted, item, depth + 1);
            }
        }
        _ => {}
    }
}

fn hint(name: &str) -> &'static str {
    match name {
        "enterpriseGlobalId" => " (give --enterprise)",
        "channelCode" => " (give --channel-code)",
        "channelCustomerId" => " (give --channel-customer-id)",
        _ => " (no earlier reply named one)",
    }
}

fn token_var(service: Service, credential: &Credential) -> &'static str {
    match (service, credential.header.to_ascii_lowercase().as_str()) {
        (Service::Order, _) => "APP",
        (Service::Member, "usertoken") => "USER",
        (Service::Member, _) => "CLIENT",
    }
}
