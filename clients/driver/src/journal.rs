//! What a scenario made the simulator answer, read from its journal: every operation of
//! both services answered with code 0, a business exception (HTTP 299) from each, and a
//! fresh `g_nonce` on every request.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// What a scenario made the simulator answer, per its journal.
#[derive(Debug)]
pub struct Coverage {
    operations: usize,
    requests: usize,
    /// Business codes answered with HTTP 299, per service.
    errors: BTreeMap<&'static str, BTreeSet<String>>,
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{0}/{0} operations answered code 0; {1} requests, each with its own g_nonce; \
             business exceptions (HTTP 299):",
            self.operations, self.requests
        )?;
        let services: Vec<String> = self
            .errors
            .iter()
            .map(|(service, codes)| {
                let codes: Vec<&str> = codes.iter().map(String::as_str).collect();
                format!(" {service} {}", codes.join(", "))
            })
            .collect();
        write!(f, "{}", services.join(";"))
    }
}

/// Checks a journal (`GET /__sandbox/v1/journal`) against the services' operations.
pub fn check_journal(
    journal: &Value,
    services: &[(&'static str, Vec<String>)],
) -> Result<Coverage, Vec<String>> {
    let mut problems = Vec::new();
    let service_of: BTreeMap<&str, &'static str> = services
        .iter()
        .flat_map(|(service, ids)| ids.iter().map(move |id| (id.as_str(), *service)))
        .collect();
    if journal["dropped"].as_u64() != Some(0) {
        problems.push(format!(
            "the journal dropped entries ({}); raise --journal-capacity",
            journal["dropped"]
        ));
    }
    let empty = Vec::new();
    let entries = journal["entries"].as_array().unwrap_or(&empty);
    let mut succeeded = BTreeSet::new();
    let mut errors: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    let mut nonces = BTreeSet::new();
    for entry in entries {
        let operation = entry["operation"].as_str().unwrap_or("?");
        let status = entry["status"].as_u64().unwrap_or(0);
        let code = entry["code"].as_str();
        let at = format!("request #{} ({operation}, HTTP {status})", entry["seq"]);
        let Some(service) = service_of.get(operation) else {
            problems.push(format!("{at}: not an operation of the specs"));
            continue;
        };
        let given: Vec<&str> = entry["query"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter(|q| q["name"] == "g_nonce")
            .filter_map(|q| q["value"].as_str())
            .collect();
        match given.as_slice() {
            [nonce] if !nonce.is_empty() => {
                if !nonces.insert(nonce.to_string()) {
                    problems.push(format!("{at}: g_nonce {nonce} was sent before"));
                }
            }
            _ => problems.push(format!("{at}: g_nonce {given:?}, not one fresh value")),
        }
        match (status, code) {
            (200, Some("0")) => {
                succeeded.insert(operation);
            }
            (299, Some(code)) if code != "0" => {
                errors.entry(service).or_default().insert(code.to_owned());
            }
            _ => problems.push(format!("{at}: answered code {code:?}")),
        }
    }
    for (id, service) in &service_of {
        if !succeeded.contains(id) {
            problems.push(format!(
                "{service} operation {id} was never answered with code 0"
            ));
        }
    }
    for (service, _) in services {
        if !errors.contains_key(service) {
            problems.push(format!("the {service} service never answered HTTP 299"));
        }
    }
    if problems.is_empty() {
        Ok(Coverage {
            operations: service_of.len(),
            requests: entries.len(),
            errors,
        })
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn services() -> Vec<(&'static str, Vec<String>)> {
        vec![
            ("order", vec!["a".to_owned(), "b".to_owned()]),
            ("member", vec!["c".to_owned()]),
        ]
    }

    fn entry(seq: u64, operation: &str, status: u64, code: &str, nonce: &str) -> Value {
        json!({"seq": seq, "operation": operation, "status": status, "code": code,
               "query": [{"name": "g_nonce", "value": nonce}]})
    }

    #[test]
    fn a_complete_journal_passes() {
        let journal = json!({"dropped": 0, "entries": [
            entry(1, "a", 200, "0", "n1"), entry(2, "a", 299, "13004", "n2"),
            entry(3, "b", 200, "0", "n3"), entry(4, "c", 299, "60027", "n4"),
            entry(5, "c", 200, "0", "n5"),
        ]});
        let coverage = check_journal(&journal, &services()).unwrap();
        assert_eq!((coverage.operations, coverage.requests), (3, 5));
        let text = coverage.to_string();
        assert!(
            text.ends_with("(HTTP 299): member 60027; order 13004"),
            "{text}"
        );
    }

    #[test]
    fn missing_operations_errors_and_nonces_are_reported() {
        let journal = json!({"dropped": 0, "entries": [
            entry(1, "a", 200, "0", "n1"), entry(2, "a", 200, "0", "n1"),
            entry(3, "c", 200, "0", ""), entry(4, "zzz", 200, "0", "n4"),
        ]});
        let problems = check_journal(&journal, &services()).unwrap_err();
        let all = problems.join("\n");
        for expected in [
            "request #2 (a, HTTP 200): g_nonce n1 was sent before",
            "request #3 (c, HTTP 200): g_nonce [\"\"]",
            "request #4 (zzz, HTTP 200): not an operation of the specs",
            "order operation b was never answered with code 0",
            "the order service never answered HTTP 299",
            "the member service never answered HTTP 299",
        ] {
            assert!(all.contains(expected), "{expected} not in:\n{all}");
        }
    }
}
