//! Configuration from the environment: `order::Client::from_env()` and
//! `member::Client::from_env()`.
//!
//! | variable | service | meaning | default |
//! |---|---|---|---|
//! | `LICENSING_ORDER_URL` | order | base URL (scheme, host, port) | required |
//! | `LICENSING_APP_TOKEN` | order | application access token | required |
//! | `LICENSING_MEMBER_URL` | member | base URL | required |
//! | `LICENSING_CLIENT_TOKEN` | member | client token | required |
//! | `LICENSING_USER_TOKEN` | member | user token | required |
//! | `LICENSING_TIMEOUT` | both | time allowed per attempt: `30s`, `500ms`, `2m`, or seconds (`1.5`) | 30 s |
//! | `LICENSING_CONNECT_TIMEOUT` | both | time allowed to connect | 10 s |
//! | `LICENSING_DEADLINE` | both | time allowed per call, retries included | none |
//! | `LICENSING_RETRY` | both | `standard` (jittered backoff) or `never` | `standard` |
//! | `LICENSING_MAX_ATTEMPTS` | both | attempts per call with `standard`, the first included | 4 |
//! | `LICENSING_CA_FILE` | both | PEM file of CA certificates to trust besides the system's | none |
//! | `LICENSING_MAX_REPLY_BYTES` | both | largest reply body read | 64 MiB |
//! | `LICENSING_PROXY` | both | proxy URL for every request, or `none` for no proxy | `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` |
//!
//! An empty variable counts as unset. A missing required variable or a malformed value
//! fails with [`crate::Error::Config`] naming the variable; the value of a token is never
//! part of an error, a log or `Debug` output. TLS trust also follows `SSL_CERT_FILE` and
//! `SSL_CERT_DIR`, as OpenSSL's tools read them (with the default `rustls` feature).

use std::time::Duration;

use crate::{ConfigError, Error};

/// Reads variables through a lookup function.
pub(crate) struct Vars<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Vars<'a> {
    pub fn new(lookup: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Self { lookup }
    }

    /// The value, trimmed; `None` when unset or empty.
    pub fn text(&self, name: &str) -> Option<String> {
        (self.lookup)(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    }

    pub fn required(&self, name: &str) -> Result<String, Error> {
        self.text(name)
            .ok_or_else(|| ConfigError::new(name, "is not set").into())
    }

    /// A required secret: only its absence is ever reported, never its value.
    pub fn required_secret(&self, name: &str) -> Result<String, Error> {
        self.required(name)
    }

    pub fn malformed(&self, name: &str, expected: &str) -> Error {
        let value = self.text(name).unwrap_or_default();
        ConfigError::new(name, format!("`{value}` is not valid: expected {expected}")).into()
    }

    pub fn number(&self, name: &str) -> Result<Option<u64>, Error> {
        self.text(name)
            .map(|v| {
                v.replace('_', "")
                    .parse::<u64>()
                    .map_err(|_| self.malformed(name, "a whole number"))
            })
            .transpose()
    }

    pub fn duration(&self, name: &str) -> Result<Option<Duration>, Error> {
        self.text(name)
            .map(|v| {
                parse_duration(&v).ok_or_else(|| {
                    self.malformed(name, "a duration such as `30s`, `500ms`, `2m` or `1.5`")
                })
            })
            .transpose()
    }
}

/// A duration as the SDK's variables and the command line take it: `500ms`, `30s`, `2m`,
/// `1h`, `7d`, or a number of seconds (`1.5`); positive, under a billion seconds. `None`
/// for anything else.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: f64 = number.trim().parse().ok()?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        "d" => value * 86_400.0,
        _ => return None,
    };
    (seconds.is_finite() && seconds > 0.0 && seconds < 1e9)
        .then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration(" 7 s "), Some(Duration::from_secs(7)));
        assert_eq!(parse_duration("7d"), Some(Duration::from_secs(7 * 86_400)));
        for bad in ["", "abc", "-1", "0", "10x", "NaN", "s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
