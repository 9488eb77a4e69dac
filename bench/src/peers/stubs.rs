//! The stubs WireMock and Mockoon serve, written from the spec on every run (never by
//! hand): for each loaded operation its method and path, and the status, content type,
//! headers and example body of its success reply.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use licensing_spec::openapiv3::{MediaType, OpenAPI, ReferenceOr, StatusCode};
use serde_json::{Value, json};

use crate::specs::Spec;

/// The last migration of Mockoon's environment format that `@mockoon/cli` 9.9.0 knows: a
/// file at that migration is run as written, without a repair prompt.
const MOCKOON_LAST_MIGRATION: u32 = 33;

/// One operation's stub: what a request matches and what the reply is, from the spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Stub {
    /// `operationId`.
    pub id: String,
    /// Upper-case HTTP method.
    pub method: String,
    /// The path template, as in the spec (its paths carry the service's base path).
    pub path: String,
    /// The success reply's HTTP status.
    pub status: u16,
    /// The media type of the reply's content.
    pub content_type: String,
    /// Response headers the spec gives an example for, besides the content type.
    pub headers: Vec<(String, String)>,
    /// The reply's example.
    pub body: Value,
}

/// The stubs of the operations `ids`, in that order, from the specs.
pub fn stubs(specs: &[Spec], ids: &[&str]) -> Result<Vec<Stub>> {
    ids.iter()
        .map(|id| {
            specs
                .iter()
                .find_map(|spec| stub(spec, id).transpose())
                .unwrap_or_else(|| Err(anyhow!("no operation `{id}` in the specs")))
        })
        .collect()
}

/// The stub of operation `id` if `spec` has it: its lowest 2xx status (the success; the
/// services answer business errors with 299), and of that reply the JSON content's
/// `example`, else its first `examples` entry, else its schema's `example`, as a mock
/// server reading the spec would serve it.
fn stub(spec: &Spec, id: &str) -> Result<Option<Stub>> {
    let api = &spec.api;
    let Some((path, method, op)) = api
        .operations()
        .find(|(_, _, op)| op.operation_id.as_deref() == Some(id))
    else {
        return Ok(None);
    };
    let at = spec.file;
    let (status, response) = op
        .responses
        .responses
        .iter()
        .filter_map(|(status, r)| match status {
            StatusCode::Code(code @ 200..=299) => Some((*code, r)),
            _ => None,
        })
        .min_by_key(|(code, _)| *code)
        .with_context(|| format!("{at}: `{id}` has no 2xx reply"))?;
    let components = api.components.as_ref();
    let response = licensing_spec::response(components, response)
        .with_context(|| format!("{at}: `{id}`'s HTTP {status} reply is an unresolved $ref"))?;
    let (content_type, media) = response
        .content
        .iter()
        .find(|(media_type, _)| is_json(media_type))
        .with_context(|| format!("{at}: `{id}`'s HTTP {status} reply has no JSON content"))?;
    let body = example(api, media)
        .with_context(|| format!("{at}: `{id}`'s HTTP {status} reply has no example"))?;
    let headers = response
        .headers
        .iter()
        .filter_map(|(name, header)| {
            let example = header.as_item()?.example.as_ref()?;
            let value = match example {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Some((name.clone(), value))
        })
        .collect();
    Ok(Some(Stub {
        id: id.to_string(),
        method: method.to_uppercase(),
        path: path.to_string(),
        status,
        content_type: content_type.clone(),
        headers,
        body,
    }))
}

fn is_json(media_type: &str) -> bool {
    let essence = media_type.split(';').next().unwrap_or_default().trim();
    essence == "application/json" || essence.ends_with("+json")
}

fn example(api: &OpenAPI, media: &MediaType) -> Option<Value> {
    if let Some(example) = &media.example {
        return Some(example.clone());
    }
    let components = api.components.as_ref();
    if let Some((_, first)) = media.examples.first() {
        let example = match first {
            ReferenceOr::Item(example) => example,
            ReferenceOr::Reference { reference } => components?
                .examples
                .get(reference.strip_prefix("#/components/examples/")?)?
                .as_item()?,
        };
        return example.value.clone();
    }
    licensing_spec::schema(components, media.schema.as_ref()?)?
        .schema_data
        .example
        .clone()
}

/// The body as served: the example's compact JSON.
fn body_text(stub: &Stub) -> String {
    stub.body.to_string()
}

/// A WireMock stub mapping (`mappings/*.json`): method and path (`urlPath`, or
/// `urlPathTemplate` for a path with parameters), so the query string, with its fresh
/// `g_nonce` per request, takes no part in matching.
pub fn wiremock_mapping(stub: &Stub) -> Value {
    let path_key = if stub.path.contains('{') {
        "urlPathTemplate"
    } else {
        "urlPath"
    };
    let mut headers = serde_json::Map::new();
    headers.insert("Content-Type".into(), stub.content_type.clone().into());
    for (name, value) in &stub.headers {
        headers.insert(name.clone(), value.clone().into());
    }
    json!({
        "name": stub.id,
        "request": { "method": stub.method, path_key: stub.path },
        "response": { "status": stub.status, "headers": headers, "body": body_text(stub) },
    })
}

/// A Mockoon environment (the data file of `mockoon-cli start --data`), one HTTP route per
/// stub, every field of the format written so the CLI runs it as it is. Templating is off
/// in each route: the bodies are literal examples.
pub fn mockoon_environment(stubs: &[Stub], port: u16) -> Value {
    // Fixed, valid (version 4) UUIDs: the format wants UUIDs, the content is the same on
    // every run.
    let uuid = |n: usize| format!("00000000-0000-4000-8000-{n:012x}");
    let routes: Vec<Value> = stubs
        .iter()
        .enumerate()
        .map(|(i, stub)| {
            let mut headers = vec![json!({ "key": "Content-Type", "value": stub.content_type })];
            headers.extend(
                stub.headers
                    .iter()
                    .map(|(key, value)| json!({ "key": key, "value": value })),
            );
            json!({
                "uuid": uuid(2 * i + 1),
                "type": "http",
                "documentation": stub.id,
                "method": stub.method.to_lowercase(),
                "endpoint": mockoon_endpoint(&stub.path),
                "responses": [{
                    "uuid": uuid(2 * i + 2),
                    "body": body_text(stub),
                    "latency": 0,
                    "statusCode": stub.status,
                    "label": "",
                    "headers": headers,
                    "bodyType": "INLINE",
                    "filePath": "",
                    "databucketID": "",
                    "sendFileAsBody": false,
                    "rules": [],
                    "rulesOperator": "OR",
                    "disableTemplating": true,
                    "fallbackTo404": false,
                    "default": true,
                    "crudKey": "id",
                    "callbacks": [],
                }],
                "responseMode": null,
                "streamingMode": null,
                "streamingInterval": 0,
            })
        })
        .collect();
    let root_children: Vec<Value> = routes
        .iter()
        .map(|r| json!({ "type": "route", "uuid": r["uuid"] }))
        .collect();
    json!({
        "uuid": uuid(0),
        "lastMigration": MOCKOON_LAST_MIGRATION,
        "name": "licensing order (cargo xtask bench)",
        "endpointPrefix": "",
        "latency": 0,
        "port": port,
        "hostname": "127.0.0.1",
        "folders": [],
        "routes": routes,
        "rootChildren": root_children,
        "proxyMode": false,
        "proxyHost": "",
        "proxyRemovePrefix": false,
        "tlsOptions": {
            "enabled": false, "type": "CERT", "pfxPath": "", "certPath": "", "keyPath": "",
            "caPath": "", "passphrase": "",
        },
        "cors": true,
        "headers": [],
        "proxyReqHeaders": [],
        "proxyResHeaders": [],
        "data": [],
        "callbacks": [],
    })
}

/// A spec path as a Mockoon endpoint: no leading slash (Mockoon adds it), `{name}` as
/// `:name`.
fn mockoon_endpoint(path: &str) -> String {
    path.trim_start_matches('/')
        .split('/')
        .map(
            |segment| match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => format!(":{name}"),
                None => segment.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

/// Where the stubs are written, fresh on every run.
fn stubs_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("bench-stubs")
}

/// WireMock's root directory (`mappings/<operationId>.json`), written afresh.
pub fn write_wiremock(target_dir: &Path, stubs: &[Stub]) -> Result<PathBuf> {
    write_wiremock_at(&stubs_dir(target_dir).join("wiremock"), stubs)
}

/// A WireMock root directory at `root` holding the mappings of `stubs`, written afresh.
pub fn write_wiremock_at(root: &Path, stubs: &[Stub]) -> Result<PathBuf> {
    let root = root.to_path_buf();
    let _ = std::fs::remove_dir_all(&root);
    let mappings = root.join("mappings");
    std::fs::create_dir_all(&mappings)
        .with_context(|| format!("creating {}", mappings.display()))?;
    for stub in stubs {
        let file = mappings.join(format!("{}.json", stub.id));
        std::fs::write(&file, pretty(&wiremock_mapping(stub))?)
            .with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(root)
}

/// Mockoon's data file, written afresh.
pub fn write_mockoon(target_dir: &Path, stubs: &[Stub], port: u16) -> Result<PathBuf> {
    let dir = stubs_dir(target_dir).join("mockoon");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("environment.json");
    std::fs::write(&file, pretty(&mockoon_environment(stubs, port))?)
        .with_context(|| format!("writing {}", file.display()))?;
    Ok(file)
}

fn pretty(value: &Value) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bench's two operations, from the real spec: the paths and methods as written
    /// there, the bodies the schemas' examples, and both stub formats serving exactly them.
    #[test]
    fn stubs_from_the_spec() {
        let root = crate::root();
        let specs = crate::specs::load_all(&root).unwrap();
        let stubs = stubs(&specs, &["queryEnterprise", "allocateShellNums"]).unwrap();
        let [read, write] = <[Stub; 2]>::try_from(stubs.clone()).unwrap();

        // The examples, read from the YAML here without the spec model.
        let raw: Value =
            serde_norway::from_str(&std::fs::read_to_string(root.join("spec/order.yaml")).unwrap())
                .unwrap();
        let schema_example = |name: &str| raw["components"]["schemas"][name]["example"].clone();
        assert_eq!(
            (read.method.as_str(), read.path.as_str(), read.status),
            ("GET", "/order/api/order/v1/enterprise/user/query", 200)
        );
        assert_eq!(read.body, schema_example("QueryEnterpriseReply"));
        assert_eq!(read.body["data"][0]["customerId"], "C100001");
        assert_eq!(
            (write.method.as_str(), write.path.as_str(), write.status),
            ("POST", "/order/api/order/v1/shellnums", 200)
        );
        assert_eq!(write.body, schema_example("AllocateShellNumsReply"));
        assert_eq!(
            write.body["data"],
            json!(["8000000001", "8000000002", "8000000003"])
        );
        for stub in [&read, &write] {
            assert_eq!(stub.content_type, "application/json");
        }

        for stub in [&read, &write] {
            let mapping = wiremock_mapping(stub);
            assert_eq!(mapping["request"]["method"], stub.method);
            assert_eq!(mapping["request"]["urlPath"], stub.path);
            // Matching on the path only: no `url`, `urlPattern` or query parameters.
            assert_eq!(mapping["request"].as_object().unwrap().len(), 2);
            assert_eq!(mapping["response"]["status"], 200);
            assert_eq!(
                mapping["response"]["headers"]["Content-Type"],
                "application/json"
            );
            let served: Value =
                serde_json::from_str(mapping["response"]["body"].as_str().unwrap()).unwrap();
            assert_eq!(served, stub.body);
        }

        let env = mockoon_environment(&stubs, 4010);
        assert_eq!(env["lastMigration"], MOCKOON_LAST_MIGRATION);
        assert_eq!(env["port"], 4010);
        let routes = env["routes"].as_array().unwrap();
        assert_eq!(routes.len(), 2);
        for (route, (stub, method, endpoint)) in routes.iter().zip([
            (&read, "get", "order/api/order/v1/enterprise/user/query"),
            (&write, "post", "order/api/order/v1/shellnums"),
        ]) {
            assert_eq!(route["method"], method);
            assert_eq!(route["endpoint"], endpoint);
            let response = &route["responses"][0];
            assert_eq!(response["statusCode"], 200);
            assert_eq!(response["default"], true);
            assert_eq!(
                response["headers"],
                json!([{ "key": "Content-Type", "value": "application/json" }])
            );
            let served: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
            assert_eq!(&served, &stub.body);
        }
        let children: Vec<&Value> = env["rootChildren"].as_array().unwrap().iter().collect();
        assert_eq!(children.len(), 2);
        assert_eq!(children[0]["uuid"], routes[0]["uuid"]);
        assert_eq!(children[1]["uuid"], routes[1]["uuid"]);
    }

    /// A server on a thread that answers one connection with `reply`, after reading the
    #[test]
    fn mockoon_endpoints() {
        assert_eq!(mockoon_endpoint("/a/{id}/b"), "a/:id/b");
        assert_eq!(mockoon_endpoint("/a/b"), "a/b");
    }
}
