//! The helper processes of the benchmark lab (`licensing-bench`, run by `cargo xtask
//! bench`), started by it in the benchmark's own build (optimized, like the servers they
//! measure). oha, the established load generator, loads the servers too (its own section
//! of `BENCHMARKS.md`, and the warm-ups); these do what it cannot:
//!
//! * `bench-load load`: a load generator, keep-alive connections on one worker thread,
//!   loading one server or several in turn, in slices from one process, so that the two
//!   rates of a ratio are measured in the same second of a shared machine (oha loads one
//!   server per process, seconds apart). The servers loaded on their own (Prism, WireMock,
//!   Mockoon) are loaded by it too, so that a ratio's two rates come from one generator:
//!   the two generators' rates differ by server (in f5131dc's record, oha ÷ `bench-load`
//!   read 1.02 on the simulator and 0.79 on WireMock), so the simulator by `bench-load`
//!   over WireMock by oha would read 10.0× where either generator alone reads 7.0× or 9.0×;
//! * `bench-load bare-server`: a bare hyper server answering one fixed body, the ceiling
//!   any server on this machine can reach;
//! * `bench-load bare-forwarder`: a TCP forwarder copying bytes both ways, the ceiling any
//!   proxy on this machine can reach;
//! * `bench-load bare-http-proxy`: an HTTP/1.1 proxy on hyper that reads each request and
//!   reply whole and checks nothing, the ceiling of any proxy that reads HTTP.
//!
//! The three servers are the baselines themselves; oha is a client only.

use std::{
    convert::Infallible,
    net::SocketAddr,
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::{
    client::legacy::Client,
    rt::{TokioExecutor, TokioIo},
};

#[derive(Parser)]
#[command(
    name = "bench-load",
    about = "Load generator and bare servers of the benchmark lab (`cargo xtask bench`)"
)]
enum Cli {
    /// Send requests for a while; print one JSON summary.
    Load(LoadOptions),
    /// Serve one fixed JSON body on 127.0.0.1:PORT until killed.
    BareServer {
        #[arg(long)]
        port: u16,
    },
    /// Forward every connection made to 127.0.0.1:PORT to UPSTREAM (`HOST:PORT`) byte for
    /// byte, one upstream connection per client connection, until killed: what any proxy
    /// between the two must at least do, the ceiling of the proxy comparison.
    BareForwarder {
        #[arg(long)]
        port: u16,
        #[arg(long)]
        upstream: String,
    },
    /// Forward every request made to 127.0.0.1:PORT to UPSTREAM (`HOST:PORT`) as HTTP/1.1,
    /// its body and its reply's read whole, over one upstream connection per client
    /// connection, checking nothing, until killed: what any proxy that reads the
    /// exchanges as HTTP (as a conformance proxy must) costs at least.
    BareHttpProxy {
        #[arg(long)]
        port: u16,
        #[arg(long)]
        upstream: String,
    },
}

/// What `load` sends.
#[derive(clap::Args)]
struct LoadOptions {
    /// Repeatable: several servers are loaded in turn, in slices of `--slice-ms`, so that
    /// each meets the machine as the others do (its speed drifts within seconds).
    #[arg(long = "url", required = true)]
    urls: Vec<String>,
    #[arg(long, default_value = "GET")]
    method: String,
    #[arg(long)]
    body: Option<String>,
    /// `name: value`, repeatable.
    #[arg(long = "header")]
    headers: Vec<String>,
    /// Repeatable, once per `--url` when given: the i-th URL's `authorization: Bearer
    /// TOKEN`, for servers that take different credentials (tenants of one simulator).
    #[arg(long = "bearer")]
    bearers: Vec<String>,
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds of load for each URL.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// How long each URL is loaded before the next one's turn.
    #[arg(long, default_value_t = 100)]
    slice_ms: u64,
}

fn main() -> ExitCode {
    let outcome = match Cli::parse() {
        Cli::Load(options) => load(options),
        Cli::BareServer { port } => bare_server(port),
        Cli::BareForwarder { port, upstream } => bare_forwarder(port, &upstream),
        Cli::BareHttpProxy { port, upstream } => bare_http_proxy(port, &upstream),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Sends requests from `concurrency` keep-alive connections per URL for `seconds` per
/// URL, the URLs taking turns in slices; prints `{requests, errors, rps, p50_us, p99_us}`
/// for one URL, an array of them (in the order given) for several. A URL's rate is the
/// mean over its slices of the sum of its connections' rates, each connection's over its
/// own time in the slice. `{nonce}` in a URL becomes a value unique to this run and
/// request, as the services require.
fn load(o: LoadOptions) -> Result<()> {
    // One worker thread: the server under test keeps the other core.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let summaries = rt.block_on(async move {
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(o.concurrency)
            .build_http();
        let run = format!(
            "{:x}{:x}",
            std::process::id(),
            Instant::now().elapsed().as_nanos()
        );
        let counter = Arc::new(AtomicU64::new(0));
        let slice = Duration::from_millis(o.slice_ms.max(1));
        let slices = (Duration::from_secs(o.seconds).as_millis() / slice.as_millis()).max(1);
        let mut targets: Vec<Target> = o.urls.iter().map(|_| Target::default()).collect();
        if !o.bearers.is_empty() && o.bearers.len() != o.urls.len() {
            anyhow::bail!(
                "--bearer: {} given for {} --url; one per URL, or none",
                o.bearers.len(),
                o.urls.len()
            );
        }
        let templates = o
            .urls
            .iter()
            .enumerate()
            .map(|(i, url)| Template::new(url, &o, o.bearers.get(i)).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        for _ in 0..slices {
            for (template, target) in templates.iter().zip(&mut targets) {
                let started = Instant::now();
                let deadline = started + slice;
                let mut tasks = Vec::with_capacity(o.concurrency);
                for _ in 0..o.concurrency {
                    let (client, counter, run) = (client.clone(), counter.clone(), run.clone());
                    let template = Arc::clone(template);
                    tasks.push(tokio::spawn(async move {
                        let (mut latencies, mut errors) = (Vec::new(), 0u64);
                        while Instant::now() < deadline {
                            let n = counter.fetch_add(1, Ordering::Relaxed);
                            let req = template.request(format_args!("{run}-{n}"))?;
                            let t = Instant::now();
                            let response = client.request(req).await?;
                            let ok = matches!(response.status().as_u16(), 200 | 299);
                            response.into_body().collect().await?;
                            latencies.push(t.elapsed().as_micros() as u64);
                            errors += u64::from(!ok);
                        }
                        anyhow::Ok((latencies, errors, started.elapsed()))
                    }));
                }
                // Each connection's rate over its own time, from the slice's start to its
                // last answer: the slice's end, when connections finish their last
                // requests one by one, counts as idle time for none of them.
                let mut rate = 0.0;
                for t in tasks {
                    let (l, e, busy) = t.await??;
                    rate += l.len() as f64 / busy.as_secs_f64();
                    target.latencies.extend(l);
                    target.errors += e;
                }
                target.rates.push(rate);
            }
        }
        anyhow::Ok(targets.into_iter().map(Target::summary).collect::<Vec<_>>())
    })?;
    match summaries.as_slice() {
        [one] => println!("{one}"),
        all => println!("{}", serde_json::Value::from(all.to_vec())),
    }
    Ok(())
}

/// A request as `load` sends it, parsed once: only the nonce differs from one request to
/// the next, so the generator spends its core on the requests, not on re-reading options.
struct Template {
    method: hyper::Method,
    /// The URL before and after `{nonce}` (all of it before, without one).
    before: String,
    after: Option<String>,
    headers: hyper::HeaderMap,
    body: Bytes,
}

impl Template {
    fn new(url: &str, o: &LoadOptions, bearer: Option<&String>) -> Result<Self> {
        let (before, after) = match url.split_once("{nonce}") {
            Some((before, after)) => (before, Some(after.to_string())),
            None => (url, None),
        };
        let mut headers = hyper::HeaderMap::new();
        for h in &o.headers {
            let (k, v) = h
                .split_once(':')
                .with_context(|| format!("--header {h:?}: not `name: value`"))?;
            headers.append(
                hyper::header::HeaderName::from_bytes(k.trim().as_bytes())
                    .with_context(|| format!("--header {h:?}: the name"))?,
                hyper::header::HeaderValue::from_str(v.trim())
                    .with_context(|| format!("--header {h:?}: the value"))?,
            );
        }
        if let Some(token) = bearer {
            headers.insert(
                hyper::header::AUTHORIZATION,
                hyper::header::HeaderValue::from_str(&format!("Bearer {token}"))
                    .context("--bearer: not a header value")?,
            );
        }
        Ok(Self {
            method: o.method.parse().context("--method")?,
            before: before.to_string(),
            after,
            headers,
            body: Bytes::from(o.body.clone().unwrap_or_default()),
        })
    }

    fn request(&self, nonce: std::fmt::Arguments<'_>) -> Result<Request<Full<Bytes>>> {
        use std::fmt::Write as _;
        let after = self.after.as_deref();
        let mut uri = String::with_capacity(self.before.len() + 40 + after.map_or(0, str::len));
        uri.push_str(&self.before);
        if let Some(after) = after {
            write!(uri, "{nonce}")?;
            uri.push_str(after);
        }
        let mut req = Request::new(Full::new(self.body.clone()));
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = uri.parse().context("the URL")?;
        *req.headers_mut() = self.headers.clone();
        Ok(req)
    }
}

/// What one URL's slices measured.
#[derive(Default)]
struct Target {
    latencies: Vec<u64>,
    errors: u64,
    /// Requests per second in each slice: the sum of its connections' rates.
    rates: Vec<f64>,
}

impl Target {
    fn summary(mut self) -> serde_json::Value {
        let all = &mut self.latencies;
        all.sort_unstable();
        let at = |q: f64| {
            all.get(((all.len().max(1) - 1) as f64 * q) as usize)
                .copied()
                .unwrap_or(0)
        };
        serde_json::json!({
            "requests": all.len(), "errors": self.errors,
            "rps": self.rates.iter().sum::<f64>() / self.rates.len().max(1) as f64,
            "p50_us": at(0.5), "p99_us": at(0.99),
        })
    }
}

/// A server that answers every request with the same JSON body and nothing else.
fn bare_server(port: u16) -> Result<()> {
    let body = Bytes::from_static(
        br#"{"code":0,"message":"success","data":[{"customerId":"C100001","channelCode":"CH01","channelCustomerId":"CC-42","enterpriseGlobalId":"EG-7f3a","enterpriseName":"Acme Robotics","isDefault":true}]}"#,
    );
    serve(port, "the bare server", move |stream| {
        let body = body.clone();
        async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let body = body.clone();
                async move {
                    // Read the request body, as any real server must.
                    let _ = req.into_body().collect().await;
                    Ok::<_, Infallible>(
                        Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(body))
                            .expect("static response"),
                    )
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
    })
}

/// Copies bytes between each accepted connection and a connection of its own to
/// `upstream`, both ways, until either side closes.
fn bare_forwarder(port: u16, upstream: &str) -> Result<()> {
    let upstream = upstream.to_string();
    serve(port, "the bare forwarder", move |mut client| {
        let upstream = upstream.clone();
        async move {
            let Ok(mut server) = tokio::net::TcpStream::connect(upstream.as_str()).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        }
    })
}

/// One client connection's upstream: where its requests are sent, and the connection,
/// which the exchange polls while it waits (as `licensing-proxy` does: no task of its own,
/// so an exchange does not hop between tasks).
type UpstreamConn = (
    hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    hyper::client::conn::http1::Connection<TokioIo<tokio::net::TcpStream>, Full<Bytes>>,
);

/// Reads each request whole, sends it on with the upstream's `Host`, reads the reply whole
/// and answers it: the HTTP work of a proxy, and nothing else.
fn bare_http_proxy(port: u16, upstream: &str) -> Result<()> {
    let host = hyper::header::HeaderValue::from_str(upstream).context("--upstream")?;
    let upstream = upstream.to_string();
    serve(port, "the bare HTTP proxy", move |client| {
        let (upstream, host) = (upstream.clone(), host.clone());
        async move {
            let Ok(server) = tokio::net::TcpStream::connect(upstream.as_str()).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let Ok(conn) = hyper::client::conn::http1::handshake(TokioIo::new(server)).await else {
                return;
            };
            // One request at a time on an HTTP/1.1 connection: never contended.
            let conn: Arc<tokio::sync::Mutex<UpstreamConn>> =
                Arc::new(tokio::sync::Mutex::new(conn));
            let service = service_fn(move |req: Request<Incoming>| {
                let (conn, host) = (Arc::clone(&conn), host.clone());
                async move {
                    let (mut parts, body) = req.into_parts();
                    let body = body.collect().await?.to_bytes();
                    parts.headers.insert(hyper::header::HOST, host);
                    let request = Request::from_parts(parts, Full::new(body));
                    let mut guard = conn.lock().await;
                    let (sender, connection) = &mut *guard;
                    let exchange = async {
                        let (parts, body) = sender.send_request(request).await?.into_parts();
                        let body = body.collect().await?.to_bytes();
                        Ok::<_, hyper::Error>(Response::from_parts(parts, Full::new(body)))
                    };
                    tokio::select! {
                        biased;
                        reply = exchange => reply.map_err(anyhow::Error::from),
                        _ = connection => Err(anyhow::anyhow!("the upstream closed the connection")),
                    }
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(client), service)
                .await;
        }
    })
}

/// Listens on 127.0.0.1:`port` (a runtime of one worker a core) and runs `connection` as a
/// task of its own for each connection accepted, until killed.
fn serve<F, Fut>(port: u16, what: &str, connection: F) -> Result<()>
where
    F: Fn(tokio::net::TcpStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
            .await
            .with_context(|| format!("binding {what}"))?;
        loop {
            let (stream, _) = listener.accept().await?;
            tokio::spawn(connection(stream));
        }
    })
}
