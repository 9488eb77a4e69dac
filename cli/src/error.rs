//! Errors of the command line and their exit codes.

use std::fmt;

/// Exit codes, documented in `licensing --help` and `docs/cli.md`.
pub mod exit {
    /// Everything succeeded.
    pub const OK: u8 = 0;
    /// The platform answered with a business error (or a bulk line failed).
    pub const API: u8 = 1;
    /// The command line, the configuration or the input is wrong; nothing was sent.
    pub const USAGE: u8 = 2;
    /// The service could not be reached, or its answer was lost: the outcome is unknown.
    pub const TRANSPORT: u8 = 3;
    /// Stopped by Ctrl-C (SIGINT).
    pub const INTERRUPTED: u8 = 130;
    /// Stopped by SIGTERM (`kill`, `timeout`, a service manager).
    pub const TERMINATED: u8 = 143;
    /// Stopped by SIGHUP (the terminal went away).
    pub const HANGUP: u8 = 129;
}

/// A failed command: a one-line message, its causes (shown with `--verbose`) and the exit
/// code.
#[derive(Debug)]
pub struct CliError {
    /// The exit code.
    pub code: u8,
    /// One line a person understands.
    pub message: String,
    /// The underlying causes, outermost first.
    pub chain: Vec<String>,
    /// The HTTP status of a reply that made it fail, when there was one: a `404` under a
    /// tenant's prefix is then told apart as the tenant gone.
    pub status: Option<u16>,
    /// The platform's business code, when it answered with one.
    pub business: Option<String>,
}

impl CliError {
    /// An error with this exit code.
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            chain: Vec::new(),
            status: None,
            business: None,
        }
    }

    /// A usage, configuration or input error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(exit::USAGE, message)
    }

    /// A broken rule of the input, naming the field (exit 2).
    pub fn invalid(field: &str, rule: impl fmt::Display) -> Self {
        Self::usage(format!("invalid input: `{field}` {rule}; nothing was sent"))
    }

    /// Adds the causes of `error` to the chain.
    pub fn caused_by(mut self, error: &dyn std::error::Error) -> Self {
        let mut source = error.source();
        while let Some(e) = source {
            self.chain.push(e.to_string());
            source = e.source();
        }
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<licensing_sdk::Error> for CliError {
    fn from(error: licensing_sdk::Error) -> Self {
        use licensing_sdk::Error as E;
        let code = match &error {
            E::Validation(_) | E::Config(_) => exit::USAGE,
            E::Api(_)
            | E::PartialFailure { .. }
            | E::UnexpectedStatus { .. }
            | E::Decode { .. }
            | E::Redirect { .. }
            | E::ReplyTooLarge { .. } => exit::API,
            _ => exit::TRANSPORT,
        };
        let message = match &error {
            E::Validation(v) => {
                format!("invalid input: `{}` {}; nothing was sent", v.field, v.rule)
            }
            E::Config(c) => format!("configuration: {c}"),
            other => other.to_string(),
        };
        let status = match &error {
            E::UnexpectedStatus { status, .. } => Some(*status),
            _ => None,
        };
        CliError {
            status,
            business: error.code().map(|c| c.as_str().to_string()),
            ..CliError::new(code, message).caused_by(&error)
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> Self {
        CliError::new(exit::USAGE, error.to_string())
    }
}
