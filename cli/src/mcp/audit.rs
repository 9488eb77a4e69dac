//! The audit log: one JSON line per tool call, with its time, the tool, the arguments
//! (secrets redacted), what came of it, and whether a person confirmed it. Written to a
//! file only its owner may read, appended, each line flushed as it is written.

use std::{
    fs::File,
    io::Write as _,
    path::{Path, PathBuf},
    sync::Mutex,
};

use serde_json::{Map, Value, json};

use super::reply::redact_value;
use crate::error::CliError;

/// The file name of the audit log in the configuration directory when `--audit-log` is
/// not given.
pub const DEFAULT_FILE: &str = "mcp-audit.jsonl";

/// Parts of argument names whose values are secrets, compared without case: a password
/// (`password`, `passwordMobile`), a token, a secret.
const SECRET_PARTS: [&str; 3] = ["password", "token", "secret"];

/// Whether an argument named `name` holds a secret: a name with one of
/// [`SECRET_PARTS`], or `appKey` (not every name with `key` in it: `borrowedUsbKey` is a
/// lock's number).
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "appkey" || SECRET_PARTS.iter().any(|s| name.contains(s))
}

/// What a call came to, as the log says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Sent and answered with its data.
    Ok,
    /// Sent, and the platform answered with an error (its code, when it gave one).
    Failed(Option<String>),
    /// Not sent: refused, naming the flag that allows it.
    Refused(Option<&'static str>),
    /// Not sent: an argument at fault.
    Invalid(String),
    /// Not sent: the answer of the same call earlier in the session.
    Repeated,
}

/// The audit log of one server.
pub struct Audit {
    path: PathBuf,
    file: Mutex<File>,
    secrets: Vec<String>,
}

impl Audit {
    /// Opens (or creates, owner-only) the log at `path`; `secrets` are replaced wherever
    /// they appear.
    pub fn open(path: &Path, secrets: Vec<String>) -> Result<Self, CliError> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path).map_err(|e| {
            CliError::usage(format!(
                "--audit-log {}: cannot open it: {e}",
                path.display()
            ))
        })?;
        Ok(Audit {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            secrets,
        })
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one call's line. A log that cannot be written stops nothing, but is said on
    /// stderr once per failure.
    pub fn record(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        outcome: &Outcome,
        confirmed: Option<bool>,
    ) {
        let (outcome, detail) = match outcome {
            Outcome::Ok => ("ok", Value::Null),
            Outcome::Failed(code) => ("failed", json!(code)),
            Outcome::Refused(flag) => ("refused", json!(flag)),
            Outcome::Invalid(field) => ("invalid", json!(field)),
            Outcome::Repeated => ("repeated", Value::Null),
        };
        let mut line = json!({
            "time": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "tool": tool,
            "arguments": redacted(arguments),
            "outcome": outcome,
            "detail": detail,
            "confirmed": confirmed,
        });
        redact_value(&mut line, &self.secrets);
        let mut text = line.to_string();
        text.push('\n');
        let written = self
            .file
            .lock()
            .expect("not poisoned")
            .write_all(text.as_bytes());
        if let Err(e) = written {
            let _ = writeln!(
                std::io::stderr(),
                "audit log {}: cannot write: {e}",
                self.path.display()
            );
        }
    }
}

/// The arguments with every value under a secret's name replaced, at any depth.
pub fn redacted(arguments: &Map<String, Value>) -> Value {
    fn walk(value: &Value) -> Value {
        match value {
            Value::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(k, v)| {
                        let v = if is_secret(k) {
                            Value::from("[redacted]")
                        } else {
                            walk(v)
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(walk).collect()),
            other => other.clone(),
        }
    }
    walk(&Value::Object(arguments.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_hold_the_call_with_its_secrets_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let audit = Audit::open(&path, vec!["tok-4242".into()]).unwrap();
        let args = json!({
            "memberGlobalId": "MG-1",
            "body": {"password": "hunter22", "note": "tok-4242", "list": [{"passwordMobile": "1"}]},
        });
        audit.record(
            "resetMemberPassword",
            args.as_object().unwrap(),
            &Outcome::Refused(Some("--allow-writes")),
            None,
        );
        audit.record("listMembers", &Map::new(), &Outcome::Ok, Some(true));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("hunter22") && !text.contains("tok-4242"),
            "{text}"
        );
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["tool"], "resetMemberPassword");
        assert_eq!(lines[0]["outcome"], "refused");
        assert_eq!(lines[0]["detail"], "--allow-writes");
        assert_eq!(lines[0]["arguments"]["memberGlobalId"], "MG-1");
        assert_eq!(lines[0]["arguments"]["body"]["password"], "[redacted]");
        assert_eq!(
            lines[0]["arguments"]["body"]["list"][0]["passwordMobile"],
            "[redacted]"
        );
        assert_eq!(lines[1]["confirmed"], true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
    }
}
