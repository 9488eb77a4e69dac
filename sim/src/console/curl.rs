//! A journal entry as a `curl` command that makes the same call to the simulator: a fresh
//! `g_nonce` each time it runs, and the caller's credentials (which the journal never
//! keeps) read from the SDK's own environment variables.

use licensing_sdk::operations::{self, Service};
use serde_json::Value;

use crate::sandbox::{client::types::JournalEntry, journal::REDACTED};

/// What makes a fresh `g_nonce` in a POSIX shell: 24 random hex digits.
const NONCE: &str = r#""$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')""#;

/// The command, for a simulator reached at `base` (`http://localhost:8080`).
pub(crate) fn command(base: &str, entry: &JournalEntry) -> String {
    let service = entry
        .operation
        .as_deref()
        .and_then(operations::find)
        .map(|op| op.service);
    let mut url = format!("{base}{}", entry.path);
    let mut query = Vec::new();
    // The nonce it was sent with is spent; the command makes a new one each time it runs.
    for param in entry.query.iter().filter(|p| p.name != "g_nonce") {
        let name = urlencode(&param.name);
        if param.value == REDACTED {
            query.push(format!(
                "{}\"{}\"",
                quote(&format!("{name}=")),
                variable(&param.name)
            ));
        } else {
            query.push(quote(&format!("{name}={}", urlencode(&param.value))));
        }
    }
    url.push('?');
    let mut target = quote(&url);
    for part in query {
        target.push_str(&part);
        target.push_str(&quote("&"));
    }
    target.push_str(&quote("g_nonce="));
    target.push_str(NONCE);
    // What the command cannot carry is said in comment lines before it: a comment after a
    // continued line would end the command there (the `\\` is then the comment's).
    let mut notes = Vec::new();
    let mut lines = vec![format!("curl -sS -X {} {target}", entry.method)];
    match service {
        Some(Service::Order) => {
            lines.push(r#"-H "Authorization: Bearer $LICENSING_APP_TOKEN""#.to_string());
            lines.push("-H 'Content-Type: application/json'".to_string());
        }
        Some(Service::Member) => {
            lines.push(r#"-H "Authorization: Bearer $LICENSING_CLIENT_TOKEN""#.to_string());
            lines.push(r#"-H "clientToken: $LICENSING_CLIENT_TOKEN""#.to_string());
            lines.push(r#"-H "userToken: $LICENSING_USER_TOKEN""#.to_string());
            if entry.request_body.is_some() {
                lines.push("-H 'Content-Type: application/json'".to_string());
            }
        }
        None => {}
    }
    match &entry.request_body {
        None => {}
        // `{"omitted": N}`, with the summary of what it applied for a request (which is
        // no body to send).
        Some(Value::Object(map))
            if map.contains_key("omitted")
                && (map.len() == 1 || (map.len() == 2 && map.contains_key("summary"))) =>
        {
            notes.push(format!(
                "# The body ({} bytes) was too large for the journal: put it in body.json.",
                map["omitted"]
            ));
            lines.push("--data-binary @body.json".to_string());
        }
        Some(Value::String(note)) if not_json(note).is_some() => {
            let size = not_json(note).unwrap_or_default();
            notes.push(format!(
                "# The body ({size} bytes) was not JSON, and the journal keeps only its size: \
                 put it in body.json."
            ));
            lines.push("--data-binary @body.json".to_string());
        }
        // Any other JSON body, a string included, is sent as the journal shows it.
        Some(body) => lines.push(format!("--data-raw {}", body_argument(body))),
    }
    lines.push(r#"-w '\nHTTP %{http_code}\n'"#.to_string());
    notes.push(lines.join(" \\\n  "));
    notes.join("\n")
}

/// The size in the journal's note for a body that was not JSON (`[12 bytes, not JSON]`);
/// `None` for any other string, which is a JSON string body.
fn not_json(text: &str) -> Option<&str> {
    let size = text.strip_prefix('[')?.strip_suffix(" bytes, not JSON]")?;
    (!size.is_empty() && size.bytes().all(|b| b.is_ascii_digit())).then_some(size)
}

/// A body as one shell word: the JSON single-quoted, with each redacted value read from an
/// environment variable named after its field (`password` → `$LICENSING_PASSWORD`).
fn body_argument(body: &Value) -> String {
    let mut marked = body.clone();
    let mut variables = Vec::new();
    mark(&mut marked, &mut variables);
    let mut text = serde_json::to_string(&marked).expect("JSON serialises");
    let mut word = String::new();
    for (i, name) in variables.iter().enumerate() {
        let marker = format!("\"\u{e000}{i}\u{e000}\"");
        if let Some(at) = text.find(&marker) {
            word.push_str(&quote(&format!("{}\"", &text[..at])));
            word.push_str(&format!("\"{name}\""));
            text = format!("\"{}", &text[at + marker.len()..]);
        }
    }
    word.push_str(&quote(&text));
    word
}

/// Replaces each redacted value by a marker, noting the variable it stands for.
fn mark(value: &mut Value, variables: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if v.as_str() == Some(REDACTED) {
                    *v = Value::String(format!("\u{e000}{}\u{e000}", variables.len()));
                    variables.push(variable(key));
                } else {
                    mark(v, variables);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mark(v, variables)),
        _ => {}
    }
}

/// `$LICENSING_<FIELD>` for a field's name (`clientToken` → `$LICENSING_CLIENT_TOKEN`).
fn variable(field: &str) -> String {
    let mut name = String::from("$LICENSING_");
    let mut previous_lower = false;
    for c in field.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            name.push('_');
        }
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_uppercase());
        } else {
            name.push('_');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    name
}

/// `text` as one single-quoted shell word: nothing in it is expanded.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::client::types::QueryParam;

    fn entry(operation: &str, method: &str, path: &str, body: Option<Value>) -> JournalEntry {
        JournalEntry {
            seq: 1,
            time: 0,
            operation: Some(operation.to_string()),
            method: method.to_string(),
            path: path.to_string(),
            query: vec![QueryParam {
                name: "g_nonce".into(),
                value: "used-once".into(),
            }],
            request_body: body,
            status: 200,
            code: Some("0".into()),
            reply_body: None,
            fault: None,
            duration_ms: 0.1,
        }
    }

    #[test]
    fn order_calls_carry_the_app_token_variable_and_a_fresh_nonce() {
        let e = entry(
            "allocateShellNums",
            "POST",
            "/order/api/order/v1/shellnums",
            Some(serde_json::json!({"size": 2})),
        );
        let command = command("http://127.0.0.1:8080", &e);
        assert!(command.starts_with("curl -sS -X POST 'http://127.0.0.1:8080/order/api/order/v1/shellnums?''g_nonce='\"$(head"), "{command}");
        assert!(
            !command.contains("used-once"),
            "the nonce is never reused: {command}"
        );
        assert!(command.contains(r#"-H "Authorization: Bearer $LICENSING_APP_TOKEN""#));
        assert!(command.contains(r#"--data-raw '{"size":2}'"#), "{command}");
    }

    #[test]
    fn member_calls_and_redacted_fields_read_variables() {
        let mut e = entry(
            "listMembers",
            "GET",
            "/me/api/v1/members",
            Some(serde_json::json!({"userList": [{"password": REDACTED}]})),
        );
        e.query.push(QueryParam {
            name: "appKey".into(),
            value: REDACTED.into(),
        });
        e.query.push(QueryParam {
            name: "q".into(),
            value: "it's & more".into(),
        });
        let command = command("http://localhost:1", &e);
        for header in [
            "clientToken: $LICENSING_CLIENT_TOKEN",
            "userToken: $LICENSING_USER_TOKEN",
        ] {
            assert!(command.contains(header), "{command}");
        }
        assert!(
            command.contains(r#"'appKey='"$LICENSING_APP_KEY"'&'"#),
            "{command}"
        );
        assert!(command.contains("'q=it%27s+%26+more'"), "{command}");
        assert!(
            command
                .contains(r#"--data-raw '{"userList":[{"password":"'"$LICENSING_PASSWORD"'"}]}'"#),
            "{command}"
        );
        assert!(!command.contains(REDACTED), "{command}");
    }

    /// Each body the journal keeps gives a command whose lines all continue it: a note
    /// comes before the command, never after a continued line.
    #[test]
    fn every_body_kind_gives_one_command() {
        let bodies = [
            None,
            Some(serde_json::json!({"size": 2})),
            Some(serde_json::json!("a JSON string")),
            Some(serde_json::json!("[12 bytes, not JSON]")),
            Some(serde_json::json!({"omitted": 70000})),
            Some(serde_json::json!({"omitted": 70000, "summary": {"channelOrderId": "CO-1"}})),
        ];
        for body in bodies {
            let e = entry(
                "allocateShellNums",
                "POST",
                "/order/api/order/v1/shellnums",
                body.clone(),
            );
            let command = command("http://127.0.0.1:8080", &e);
            let lines: Vec<&str> = command.lines().collect();
            let start = lines.iter().position(|l| l.starts_with("curl ")).unwrap();
            assert!(
                lines[..start].iter().all(|l| l.starts_with("# ")),
                "{command}"
            );
            for line in &lines[start..lines.len() - 1] {
                assert!(line.ends_with(" \\") && !line.contains('#'), "{command}");
            }
            assert!(lines.last().unwrap().contains("-w '"), "{command}");
            if body.as_ref().is_some_and(|b| b.get("omitted").is_some()) {
                assert!(command.contains("--data-binary @body.json"), "{command}");
                assert!(
                    !command.contains("CO-1"),
                    "the summary is not sent: {command}"
                );
            }
            match body.as_ref().and_then(Value::as_str) {
                Some("a JSON string") => {
                    assert!(
                        command.contains(r#"--data-raw '"a JSON string"'"#),
                        "{command}"
                    );
                }
                Some(_) => assert!(command.contains("(12 bytes) was not JSON"), "{command}"),
                None => {}
            }
        }
    }

    #[test]
    fn a_hostile_host_or_path_stays_quoted() {
        let e = entry("allocateShellNums", "POST", "/o'$(touch x)`id`", None);
        let command = command("http://h'$(rm -rf ~)", &e);
        assert!(
            command.contains(r"'http://h'\''$(rm -rf ~)/o'\''$(touch x)`id`?'"),
            "{command}"
        );
    }
}
