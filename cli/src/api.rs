//! `licensing api METHOD PATH`: a raw request through the SDK's client (its credentials,
//! user agent, `g_nonce`, reply bound and origin check), for what the spec does not
//! cover yet. The reply body is printed as received.

use clap::ArgMatches;
use licensing_sdk::operations::{self, Service};
use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};
use serde_json::{Map, Value};

use crate::{
    config::Context,
    error::{CliError, exit},
    input::read_source,
    output::Sink,
};

/// The service whose operations' paths share PATH's first two segments.
fn service_of(path: &str) -> Option<Service> {
    let prefix = |p: &str| p.split('/').take(3).collect::<Vec<_>>().join("/");
    let wanted = prefix(path);
    operations::ALL
        .iter()
        .find(|op| prefix(op.path) == wanted)
        .map(|op| op.service)
}

/// Runs the request.
pub async fn run(ctx: &Context, m: &ArgMatches, sink: &mut Sink) -> Result<(), CliError> {
    let method_text = m
        .get_one::<String>("method")
        .expect("required")
        .to_ascii_uppercase();
    let method = reqwest::Method::from_bytes(method_text.as_bytes())
        .map_err(|_| CliError::usage(format!("`{method_text}` is not an HTTP method")))?;
    let path = m.get_one::<String>("path").expect("required");
    if !path.starts_with('/') {
        return Err(CliError::usage(format!(
            "PATH must start with `/` (is `{path}`); the base URL comes from the configuration"
        )));
    }
    let service = match m.get_one::<String>("service").map(String::as_str) {
        Some("order") => Service::Order,
        Some("member") => Service::Member,
        _ => service_of(path.split('?').next().unwrap_or(path)).ok_or_else(|| {
            CliError::usage(format!(
                "no operation's path starts like `{path}`: give --service order|member"
            ))
        })?,
    };
    let body = if let Some(source) = m.get_one::<String>("input") {
        Some(read_source(source)?)
    } else {
        let mut fields = Map::new();
        for pair in m.get_many::<String>("field").into_iter().flatten() {
            let (key, value) = if let Some((k, v)) = pair.split_once(":=") {
                let v: Value = serde_json::from_str(v).map_err(|e| {
                    CliError::usage(format!("--field {pair}: not a JSON value: {e}"))
                })?;
                (k, v)
            } else if let Some((k, v)) = pair.split_once('=') {
                (k, Value::String(v.to_string()))
            } else {
                return Err(CliError::usage(format!(
                    "--field {pair}: expected KEY=VALUE or KEY:=JSON"
                )));
            };
            fields.insert(key.to_string(), value);
        }
        (!fields.is_empty()).then(|| serde_json::to_vec(&Value::Object(fields)).expect("JSON"))
    };
    let queries: Vec<(String, String)> = m
        .get_many::<String>("query")
        .into_iter()
        .flatten()
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| CliError::usage(format!("--query {pair}: expected KEY=VALUE")))
        })
        .collect::<Result<_, _>>()?;
    let info = OperationInfo {
        operation_id: "raw",
    };
    let response = match service {
        Service::Order => {
            let client = ctx.order_client()?;
            build_and_send(&client, method, path, &queries, body, &info).await?
        }
        Service::Member => {
            let client = ctx.member_client()?;
            build_and_send(&client, method, path, &queries, body, &info).await?
        }
    };
    let status = response.status();
    if m.get_flag("include") {
        let mut head = format!("{:?} {status}\n", response.version());
        for (name, value) in response.headers() {
            head.push_str(&format!(
                "{name}: {}\n",
                value.to_str().unwrap_or("(binary)")
            ));
        }
        head.push('\n');
        sink.write(head.as_bytes())?;
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|e| CliError::new(exit::TRANSPORT, format!("reading the reply: {e}")))?;
    sink.write(&bytes)?;
    if !bytes.ends_with(b"\n") {
        sink.write(b"\n")?;
    }
    let code = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v.get("code").cloned());
    let success = status.as_u16() == 200 && matches!(&code, Some(c) if c == 0 || c == "0");
    if success {
        Ok(())
    } else {
        let code = code.map_or_else(|| "none".to_string(), |c| c.to_string());
        Err(CliError::new(
            exit::API,
            format!("HTTP {}, business code {code}", status.as_u16()),
        ))
    }
}

fn build(
    http: &reqwest::Client,
    base: &str,
    method: reqwest::Method,
    path: &str,
    queries: &[(String, String)],
    body: Option<Vec<u8>>,
) -> Result<reqwest::Request, CliError> {
    let mut builder = http
        .request(method, format!("{base}{path}"))
        .header(reqwest::header::ACCEPT, "application/json")
        .query(queries);
    if let Some(body) = body {
        builder = builder
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
    }
    builder
        .build()
        .map_err(|e| CliError::usage(format!("cannot build the request: {}", redacted(e))))
}

/// reqwest's error without the query, user info and fragment of its URL, which it shows:
/// a query may carry a secret (`-q appKey=…`), as the SDK's own errors never show.
fn redacted(mut error: reqwest::Error) -> reqwest::Error {
    if let Some(url) = error.url_mut() {
        url.set_query(None);
        url.set_fragment(None);
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    error
}

/// A generated client of either service: its hooks and its connection.
trait Hooked:
    ClientHooks<licensing_sdk::runtime::Runtime> + ClientInfo<licensing_sdk::runtime::Runtime> + Sync
{
}

impl<C> Hooked for C where
    C: ClientHooks<licensing_sdk::runtime::Runtime>
        + ClientInfo<licensing_sdk::runtime::Runtime>
        + Sync
{
}

/// The raw request on `client`'s connection and base URL, sent through its hooks.
async fn build_and_send<C: Hooked>(
    client: &C,
    method: reqwest::Method,
    path: &str,
    queries: &[(String, String)],
    body: Option<Vec<u8>>,
    info: &OperationInfo,
) -> Result<reqwest::Response, CliError> {
    let request = build(
        client.client(),
        client.baseurl(),
        method,
        path,
        queries,
        body,
    )?;
    send(client, request, info).await
}

/// Sends through the client's own hooks: the same credentials, `g_nonce`, origin check and
/// reply bound as a generated call.
async fn send<C: Hooked>(
    client: &C,
    mut request: reqwest::Request,
    info: &OperationInfo,
) -> Result<reqwest::Response, CliError> {
    client
        .pre::<()>(&mut request, info)
        .await
        .map_err(|e| CliError::usage(e.to_string()))?;
    let response = client.exec(request, info).await.map_err(|e| {
        let e = redacted(e);
        CliError::new(
            exit::TRANSPORT,
            format!(
                "{}: the outcome is unknown if it was sent",
                transport_text(&e)
            ),
        )
        .caused_by(&e)
    })?;
    Ok(response)
}

fn transport_text(e: &reqwest::Error) -> String {
    if e.is_connect() {
        "cannot connect".into()
    } else if e.is_timeout() {
        "timed out".into()
    } else {
        e.to_string()
    }
}
