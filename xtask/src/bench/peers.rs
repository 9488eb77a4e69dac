//! WireMock and Mockoon, two stateless stub servers, beside Prism in the throughput
//! comparison. Their stubs are written from the spec on every run (never by hand): for each
//! loaded operation its method and path, and the status, content type, headers and example
//! body of its success reply. Both come from npm at pinned versions, installed into the
//! target directory while cargo builds; each is checked to answer every loaded request with
//! its example before any load.

use std::{
    io::{Read, Write},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

use anyhow::{Context, Result, anyhow, bail};
use licensing_spec::openapiv3::{MediaType, OpenAPI, ReferenceOr, StatusCode};
use serde_json::{Value, json};

use super::{APP_TOKEN, Server, free_port};
use crate::spec::Spec;

/// The npm package `wiremock`: WireMock's standalone jar, run with Java.
pub const WIREMOCK_VERSION: &str = "3.13.2";
/// The npm package `@mockoon/cli`.
pub const MOCKOON_VERSION: &str = "9.9.0";

/// The last migration of Mockoon's environment format that `@mockoon/cli` 9.9.0 knows: a
/// file at that migration is run as written, without a repair prompt.
const MOCKOON_LAST_MIGRATION: u32 = 33;

/// The stub servers of the comparison, in the order they are loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    WireMock,
    Mockoon,
}

impl Peer {
    /// Every stub server, in the order they are loaded.
    pub const ALL: [Peer; 2] = [Peer::WireMock, Peer::Mockoon];

    /// The key of its results.
    pub fn key(self) -> &'static str {
        match self {
            Peer::WireMock => "wiremock",
            Peer::Mockoon => "mockoon",
        }
    }

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Peer::WireMock => "WireMock",
            Peer::Mockoon => "Mockoon",
        }
    }

    /// The pinned version of its npm package.
    pub fn version(self) -> &'static str {
        match self {
            Peer::WireMock => WIREMOCK_VERSION,
            Peer::Mockoon => MOCKOON_VERSION,
        }
    }
}

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
pub fn stubs(root: &Path, ids: &[&str]) -> Result<Vec<Stub>> {
    let specs = Spec::load_all(root)?;
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
    let at = spec.service.spec;
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
fn write_wiremock(target_dir: &Path, stubs: &[Stub]) -> Result<PathBuf> {
    let root = stubs_dir(target_dir).join("wiremock");
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
fn write_mockoon(target_dir: &Path, stubs: &[Stub], port: u16) -> Result<PathBuf> {
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

// ------------------------------------------------------------------------- install

/// `npm install` of both stub servers into the target directory (beside Prism's prefix),
/// running in the background.
pub struct PeersInstall {
    npm: Child,
}

impl PeersInstall {
    fn prefix(target_dir: &Path) -> PathBuf {
        target_dir.join("bench-node-peers")
    }

    fn package(target_dir: &Path, name: &str) -> PathBuf {
        Self::prefix(target_dir).join("node_modules").join(name)
    }

    /// Both packages are there at their pinned versions.
    fn installed(target_dir: &Path) -> bool {
        [
            ("wiremock", WIREMOCK_VERSION),
            ("@mockoon/cli", MOCKOON_VERSION),
        ]
        .iter()
        .all(|(name, version)| {
            std::fs::read(Self::package(target_dir, name).join("package.json"))
                .ok()
                .and_then(|text| serde_json::from_slice::<Value>(&text).ok())
                .is_some_and(|p| p["version"] == *version)
        })
    }

    /// Checks that Java is there (WireMock runs on it), then starts the install; `None`
    /// when both are installed already.
    pub fn start(target_dir: &Path) -> Result<Option<Self>> {
        java_version()?;
        if Self::installed(target_dir) {
            return Ok(None);
        }
        let prefix = Self::prefix(target_dir);
        eprintln!(
            "installing wiremock {WIREMOCK_VERSION} and @mockoon/cli {MOCKOON_VERSION} into {}",
            prefix.display()
        );
        let npm = Command::new("npm")
            .args([
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--save-exact",
            ])
            .arg("--prefix")
            .arg(&prefix)
            .arg(format!("wiremock@{WIREMOCK_VERSION}"))
            .arg(format!("@mockoon/cli@{MOCKOON_VERSION}"))
            .stdin(Stdio::null())
            .spawn()
            .context(
                "running npm (Node.js and npm are needed for the WireMock and Mockoon comparison)",
            )?;
        Ok(Some(Self { npm }))
    }

    /// Waits for npm, then checks both versions are there.
    pub fn wait(mut self, target_dir: &Path) -> Result<()> {
        if !self.npm.wait()?.success() || !Self::installed(target_dir) {
            bail!(
                "npm could not install wiremock {WIREMOCK_VERSION} and @mockoon/cli \
                 {MOCKOON_VERSION}; the stub-server comparison needs them"
            );
        }
        Ok(())
    }
}

/// The Java runtime and its version, from `java -version`'s first line (`openjdk version
/// "17.0.15" …` gives `openjdk 17.0.15`), or an error saying how to get Java.
pub fn java_version() -> Result<String> {
    let out = Command::new("java").arg("-version").output().ok();
    match out {
        Some(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stderr);
            let first = text.lines().next().unwrap_or_default().trim();
            Ok(match first.split('"').collect::<Vec<_>>().as_slice() {
                [name, version, ..] => {
                    let name = name.trim().trim_end_matches("version").trim();
                    format!("{name} {version}")
                }
                _ => first.to_string(),
            })
        }
        _ => bail!(
            "WireMock, in the throughput comparison, runs on Java, and no `java` runs here: \
             install a Java runtime (`apt-get install default-jre-headless`), or leave the \
             throughput section out (`--only` with the other sections)"
        ),
    }
}

/// `node --version` (`v20.20.2`), for the report.
pub fn node_version() -> String {
    Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The standalone jar the npm package ships (`build/wiremock-standalone-*.jar`).
fn wiremock_jar(target_dir: &Path) -> Result<PathBuf> {
    let build = PeersInstall::package(target_dir, "wiremock").join("build");
    let jars: Vec<PathBuf> = std::fs::read_dir(&build)
        .with_context(|| format!("reading {}", build.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jar"))
        .collect();
    match <[PathBuf; 1]>::try_from(jars) {
        Ok([jar]) => Ok(jar),
        Err(jars) => bail!(
            "expected one jar in {}, found {}",
            build.display(),
            jars.len()
        ),
    }
}

// ------------------------------------------------------------------------- servers

/// One request as the load sends it, for the check before the load.
pub struct Probe<'a> {
    /// `operationId`.
    pub id: &'a str,
    /// Without the `?`.
    pub query: String,
    /// The JSON body, if the operation takes one.
    pub body: Option<&'a str>,
}

/// Both stub servers, serving the stubs of `probes`' operations, each checked to answer
/// every probe with its example.
pub fn start(root: &Path, target_dir: &Path, probes: &[Probe]) -> Result<Vec<(Peer, Server)>> {
    // `run` has them installed while cargo builds; anything else installs them here.
    if let Some(install) = PeersInstall::start(target_dir)? {
        install.wait(target_dir)?;
    }
    let ids: Vec<&str> = probes.iter().map(|p| p.id).collect();
    let stubs = stubs(root, &ids)?;
    let mut started = Vec::new();
    for peer in Peer::ALL {
        let server = match peer {
            Peer::WireMock => wiremock(target_dir, &stubs)?,
            Peer::Mockoon => mockoon(target_dir, &stubs)?,
        };
        for (stub, probe) in stubs.iter().zip(probes) {
            check(peer, &server.url, stub, probe)?;
        }
        started.push((peer, server));
    }
    Ok(started)
}

/// WireMock's jar run by Java directly: the npm package's `wiremock` command is a Node.js
/// process that starts `java -jar` as a child of its own, which stopping that process
/// would leave running. Its defaults, except the request journal and request logging,
/// off as WireMock documents for long runs and performance testing.
fn wiremock(target_dir: &Path, stubs: &[Stub]) -> Result<Server> {
    let root_dir = write_wiremock(target_dir, stubs)?;
    let jar = wiremock_jar(target_dir)?;
    let port = free_port()?;
    let mut cmd = Command::new("java");
    cmd.arg("-jar")
        .arg(&jar)
        .args(["--port", &port.to_string(), "--bind-address", "127.0.0.1"])
        .arg("--root-dir")
        .arg(&root_dir)
        .args(["--disable-banner", "--no-request-journal"])
        .arg("--disable-request-logging");
    Server::quiet(cmd, port, "WireMock (java -jar)")
}

/// `mockoon-cli start`, its defaults except the log file (each transaction is still
/// logged, to stdout, discarded here): one process, Node.js running the CLI's script.
fn mockoon(target_dir: &Path, stubs: &[Stub]) -> Result<Server> {
    let port = free_port()?;
    let data = write_mockoon(target_dir, stubs, port)?;
    let script = PeersInstall::package(target_dir, "@mockoon/cli").join("bin/run.js");
    let mut cmd = Command::new("node");
    cmd.arg(&script)
        .arg("start")
        .arg("--data")
        .arg(&data)
        .args(["--port", &port.to_string(), "--hostname", "127.0.0.1"])
        .arg("--disable-log-to-file");
    Server::quiet(cmd, port, "Mockoon (mockoon-cli start)")
}

/// `peer` answers the probe, sent as the load sends it, with the stub's status, content
/// type and example body; anything else (a 404 of a stub that did not match, another
/// body) ends the benchmark.
fn check(peer: Peer, url: &str, stub: &Stub, probe: &Probe) -> Result<()> {
    let target = format!("{}?{}", stub.path, probe.query);
    let (status, content_type, body) = request(url, &stub.method, &target, probe.body)
        .with_context(|| format!("{} on {} {target}", peer.name(), stub.method))?;
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    if status != stub.status
        || !content_type
            .to_ascii_lowercase()
            .starts_with(&stub.content_type.to_ascii_lowercase())
        || parsed.as_ref() != Some(&stub.body)
    {
        bail!(
            "{} answered {} {target} with HTTP {status} ({content_type}) {}, not the spec's \
             example of `{}` (HTTP {}, {}): {}",
            peer.name(),
            stub.method,
            String::from_utf8_lossy(&body),
            stub.id,
            stub.status,
            stub.content_type,
            stub.body
        );
    }
    Ok(())
}

/// One HTTP/1.1 request with the benchmark's headers over a connection of its own
/// (`Connection: close`): the status, the content type and the body (by its length,
/// chunked, or up to the close). Only for the checks, so std's sockets are enough.
fn request(
    url: &str,
    method: &str,
    target: &str,
    body: Option<&str>,
) -> Result<(u16, String, Vec<u8>)> {
    let host = url
        .strip_prefix("http://")
        .with_context(|| format!("not an http:// URL: {url}"))?;
    let mut stream =
        std::net::TcpStream::connect(host).with_context(|| format!("connecting to {host}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.unwrap_or_default();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {APP_TOKEN}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    // A stub's reply is a few hundred bytes; anything past 1 MiB is not one.
    let mut reply = Vec::new();
    stream.take(1 << 20).read_to_end(&mut reply)?;
    let end = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .with_context(|| format!("no complete reply: {:?}", String::from_utf8_lossy(&reply)))?;
    let head = String::from_utf8_lossy(&reply[..end]).into_owned();
    let rest = &reply[end + 4..];
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse::<u16>().ok())
        .with_context(|| format!("no status line: {head:?}"))?;
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let body = if let Some(length) = header("content-length") {
        let length: usize = length.parse().context("content-length")?;
        rest.get(..length)
            .context("a reply shorter than its content-length")?
            .to_vec()
    } else if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        dechunk(rest)?
    } else {
        rest.to_vec()
    };
    Ok((status, header("content-type").unwrap_or_default(), body))
}

/// A chunked body's content.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a chunk without its size line")?;
        let size = std::str::from_utf8(&rest[..line_end])?;
        let size = usize::from_str_radix(size.split(';').next().unwrap_or_default().trim(), 16)
            .context("a chunk size")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(rest.get(..size).context("a chunk cut short")?);
        rest = rest.get(size + 2..).context("a chunk cut short")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the workspace root")
            .to_path_buf()
    }

    /// The bench's two operations, from the real spec: the paths and methods as written
    /// there, the bodies the schemas' examples, and both stub formats serving exactly them.
    #[test]
    fn stubs_from_the_spec() {
        let root = root();
        let stubs = stubs(&root, &["queryEnterprise", "allocateShellNums"]).unwrap();
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
    /// request's head.
    fn answering(reply: &'static str) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
                head.push(byte[0]);
            }
            stream.write_all(reply.as_bytes()).unwrap();
        });
        url
    }

    #[test]
    fn the_check_wants_the_example() {
        let stub = Stub {
            id: "op".into(),
            method: "GET".into(),
            path: "/a".into(),
            status: 200,
            content_type: "application/json".into(),
            headers: Vec::new(),
            body: json!({ "code": 0 }),
        };
        let probe = Probe {
            id: "op",
            query: "g_nonce=1".into(),
            body: None,
        };
        let url = answering(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\n\
             transfer-encoding: chunked\r\n\r\n4\r\n{\"co\r\n6\r\nde\":0}\r\n0\r\n\r\n",
        );
        check(Peer::Mockoon, &url, &stub, &probe).unwrap();
        let url = answering("HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\nnot found");
        let error = check(Peer::WireMock, &url, &stub, &probe).unwrap_err();
        assert!(error.to_string().contains("HTTP 404"), "{error}");
        let url = answering(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n{\"code\":1}",
        );
        assert!(check(Peer::WireMock, &url, &stub, &probe).is_err());
    }

    #[test]
    fn mockoon_endpoints() {
        assert_eq!(mockoon_endpoint("/a/{id}/b"), "a/:id/b");
        assert_eq!(mockoon_endpoint("/a/b"), "a/b");
    }

    #[test]
    fn chunked_bodies() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert!(dechunk(b"5\r\nab").is_err());
    }
}
