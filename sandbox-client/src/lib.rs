//! The client of `licensing-sim`'s sandbox admin API (`spec/sandbox.yaml`), generated like
//! the SDK's service clients: reset, state export and import, seeds, the request journal,
//! scripted faults and the clock, for a simulator anywhere. The seed types
//! ([`types::Seed`]), a seed reader that names the offending field ([`parse_seed`]) and
//! the built-in seeds ([`builtin_seed`]) come with it.
//!
//! It holds no server code: the `licensing` command line and tests against a simulator
//! in another process use it alone. `licensing-sim` re-exports it as `licensing_sim::admin`
//! (and `Simulator::admin()` returns its [`Client`] for a simulator in the same process).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use licensing_sandbox_client::{self as admin, types::{BuiltinSeed, Fault, FaultKind, FaultRuleSpec}};
//!
//! let admin = admin::client("http://127.0.0.1:8080", None)?;
//! admin.load_builtin_seed().name(BuiltinSeed::Demo).send().await?;
//! admin
//!     .create_fault()
//!     .body(FaultRuleSpec::builder()
//!         .operation("allocateShellNums")
//!         .times(std::num::NonZeroU64::new(1))
//!         .fault(Fault::builder().kind(FaultKind::Code).code(Some("500".to_string()))))
//!     .send()
//!     .await?;
//! let journal = admin.list_journal().send().await?.into_inner();
//! println!("{} requests so far", journal.entries.len());
//! # Ok(()) }
//! ```
//!
//! Features: `rustls` (default) to reach a simulator served over HTTPS, or `native-tls`.

#![warn(missing_docs)]

/// The code generated from `spec/sandbox.yaml` (`Client`, `types`, `builder`, `prelude`).
mod null;
pub use null::first_null;

mod generated {
    #![allow(missing_docs, clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/sandbox.rs"));
}

pub use generated::*;

/// The application token a simulator's order service accepts unless configured otherwise
/// (`licensing-sim --app-token`); also `licensing_sim::DEFAULT_APP_TOKEN`.
pub const DEFAULT_APP_TOKEN: &str = "sim-app-token";
/// The client token a simulator's member center accepts unless configured otherwise
/// (`--client-token`); also `licensing_sim::DEFAULT_CLIENT_TOKEN`.
pub const DEFAULT_CLIENT_TOKEN: &str = "sim-client-token";
/// The user token a simulator's member center accepts unless configured otherwise
/// (`--user-token`); also `licensing_sim::DEFAULT_USER_TOKEN`.
pub const DEFAULT_USER_TOKEN: &str = "sim-user-token";

/// The built-in `demo` seed: one enterprise, Acme Robotics, with a channel customer, two
/// locks and a lent lock, and three employees.
const DEMO: &str = include_str!("demo-seed.json");

/// A client for the admin API at `base_url`, sending `Authorization: Bearer <token>` when
/// a token is given.
pub fn client(base_url: &str, token: Option<&str>) -> Result<Client, reqwest::Error> {
    client_with(base_url, token, reqwest::Client::builder())
}

/// As [`client`], from a `reqwest::ClientBuilder` of the caller's (to trust a test CA, set
/// timeouts, …).
pub fn client_with(
    base_url: &str,
    token: Option<&str>,
    builder: reqwest::ClientBuilder,
) -> Result<Client, reqwest::Error> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(token) = token {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .unwrap_or_else(|_| reqwest::header::HeaderValue::from_static("Bearer invalid"));
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    let http = builder.default_headers(headers).build()?;
    Ok(Client::new_with_client(base_url, http))
}

/// Reads a seed (the `Seed` schema of `spec/sandbox.yaml`); the error names the offending
/// field by its path (`enterprises[0].assets[1].lentLock: invalid type: …`). As the
/// admin API, it refuses `null` anywhere: the schema gives every field a type.
pub fn parse_seed(json: &str) -> Result<types::Seed, String> {
    // Two passes over the text, neither building a `Value` of it: a seed of 50,000 assets
    // is some 7 MB of JSON, and its `Value` tree several times that.
    let scan = scan(json).map_err(|e| format!("the body is not valid JSON: {e}"))?;
    if let Some(path) = scan.null {
        return Err(format!("{path}: must not be null"));
    }
    let mut deserializer = serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize::<_, types::Seed>(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        if !scan.object {
            format!("the body must be a JSON object: {message}")
        } else if path == "." {
            message
        } else {
            format!("{path}: {message}")
        }
    })
}

/// What [`scan`] finds in a JSON document.
struct Scan {
    /// Whether the document is an object.
    object: bool,
    /// The path of its first `null` (`enterprises[0].branchName`), if any.
    null: Option<String>,
}

/// Reads a JSON document through, keeping only the path to its first `null`.
fn scan(json: &str) -> Result<Scan, serde_json::Error> {
    let object = json.trim_start().starts_with('{');
    let null = first_null(json.as_bytes(), &[])?;
    Ok(Scan { object, null })
}

/// A built-in seed by name (`demo`).
pub fn builtin_seed(name: &str) -> Option<types::Seed> {
    match name {
        "demo" => Some(serde_json::from_str(DEMO).expect("the demo seed is a valid seed")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_seed_is_built_in_and_reads_back() {
        let demo = builtin_seed("demo").expect("demo");
        assert_eq!(demo.enterprises.len(), 1);
        assert_eq!(demo.enterprises[0].name.as_str(), "Acme Robotics");
        let text = serde_json::to_value(&demo).unwrap();
        let again = parse_seed(&text.to_string()).unwrap();
        assert_eq!(serde_json::to_value(&again).unwrap(), text);
        assert!(builtin_seed("nope").is_none());
    }

    #[test]
    fn a_bad_seed_names_the_field() {
        for (seed, expected) in [
            (
                r#"{"enterprises": [{"name": 5, "crmCustomerId": "C"}]}"#,
                "enterprises[0].name: invalid type: integer `5`",
            ),
            (
                r#"{"enterprises": [{"name": "A", "crmCustomerId": "C", "colour": "red"}]}"#,
                "enterprises[0].colour: unknown field `colour`",
            ),
            (
                r#"{"enterprises": [{"name": "A", "crmCustomerId": "C",
                    "assets": [{"key": "k", "licenseType": "lock", "lentLock": "yes", "products": []}]}]}"#,
                "enterprises[0].assets[0].lentLock: invalid type: string \"yes\", expected a boolean",
            ),
            (
                r#"{"enterprises": [{"name": "A", "crmCustomerId": "C", "branchName": null}]}"#,
                "enterprises[0].branchName: must not be null",
            ),
            (
                r#"{"enterprises": [{"crmCustomerId": "C"}]}"#,
                "enterprises[0]: missing field `name`",
            ),
            (
                "5",
                "the body must be a JSON object: invalid type: integer `5`",
            ),
            (
                "{",
                "the body is not valid JSON: EOF while parsing an object",
            ),
        ] {
            let error = parse_seed(seed).unwrap_err();
            assert!(error.starts_with(expected), "{seed}: {error}");
        }
    }

    #[test]
    fn a_client_for_a_base_url() {
        let admin = client("http://127.0.0.1:1", Some("t0ken")).unwrap();
        assert_eq!(admin.baseurl(), "http://127.0.0.1:1");
        assert!(client("http://127.0.0.1:1", Some("not\na header")).is_ok());
    }
}
