//! The client of the sandbox admin API (`spec/sandbox.yaml`), generated like the SDK's
//! service clients: reset, state export and import, seeds, the request journal, scripted
//! faults and the clock, for a simulator in this process ([`crate::Simulator::admin`]) or
//! anywhere else.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use licensing_sim::{Simulator, admin::types::{Fault, FaultKind, FaultRuleSpec}};
//!
//! let sim = Simulator::start().await?;
//! let admin = sim.admin();
//! admin.load_builtin_seed().name(licensing_sim::admin::types::BuiltinSeed::Demo).send().await?;
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

#![allow(missing_docs, clippy::all)]

include!(concat!(env!("OUT_DIR"), "/sandbox.rs"));

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
/// field by its path (`enterprises[0].assets[1].licenseType: unknown variant …`).
pub fn parse_seed(json: &str) -> Result<types::Seed, String> {
    super::parse(json.as_bytes()).map_err(|e| e.to_string())
}

/// A built-in seed by name (`demo`).
pub fn builtin_seed(name: &str) -> Option<types::Seed> {
    super::seed::builtin(name)
}
