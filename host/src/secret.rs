//! Which names carry credentials: their values never reach the simulator's journal, its
//! state file's log, the proxy's recordings or an error.

use serde_json::Value;

/// What stands for a secret that is not shown (in the simulator's journal, a console, a
/// recording).
pub const REDACTED: &str = "[REDACTED]";

/// Whether a parameter, header or field name carries a secret: it holds `password`,
/// `token`, `secret`, `appKey` or `authorization`, in any case.
pub fn is_secret(name: &str) -> bool {
    // Asked of every query parameter of every request (the journal's target, the state
    // log's query): compared in place, ignoring ASCII case, without a lowercased copy.
    // Each position is looked at once, by its letter: only a `p`, `t`, `s` or `a` can
    // start a secret's name. Trying every name at every position cost 5,400
    // instructions on a read's four parameters (callgrind); this, a tenth of it.
    let name = name.as_bytes();
    let at = |i: usize, secret: &[u8]| {
        name.get(i..i + secret.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(secret))
    };
    (0..name.len()).any(|i| match name[i].to_ascii_lowercase() {
        b'p' => at(i, b"password"),
        b't' => at(i, b"token"),
        b's' => at(i, b"secret"),
        b'a' => at(i, b"appkey") || at(i, b"authorization"),
        _ => false,
    })
}

/// Replaces the value of every secret field ([`is_secret`]) of a JSON document, at any
/// depth, by [`REDACTED`].
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if is_secret(key) {
                    *v = Value::String(REDACTED.to_string());
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secret_names_are_found_whatever_their_case() {
        for name in [
            "appKey",
            "APPKEY",
            "password",
            "passwordMobile",
            "clientToken",
            "usertoken",
            "x-Secret-id",
            "Authorization",
        ] {
            assert!(super::is_secret(name), "{name}");
        }
        for name in [
            "g_nonce",
            "channelCode",
            "pass",
            "tok",
            "app_key",
            "",
            "ключ",
        ] {
            assert!(!super::is_secret(name), "{name}");
        }
    }

    /// The same answers as the plain search: every secret's name at every position, in
    /// every case, among other letters (those that start a name included).
    #[test]
    fn secret_names_are_found_as_a_plain_search_finds_them() {
        const SECRETS: [&str; 5] = ["password", "token", "secret", "appkey", "authorization"];
        let plain = |name: &str| {
            let lower = name.to_ascii_lowercase();
            SECRETS.iter().any(|s| lower.contains(s))
        };
        let mut names = vec![String::new(), "ключ".to_string()];
        for secret in SECRETS {
            for cut in 0..secret.len() {
                // Cut short, and whole, between and after other letters.
                for whole in [&secret[..cut], secret] {
                    for (before, after) in [("", ""), ("pat", "s"), ("aPP", "_id"), ("x", "")] {
                        names.push(format!("{before}{whole}{after}"));
                        names.push(format!("{before}{}{after}", whole.to_ascii_uppercase()));
                    }
                }
            }
        }
        for name in &names {
            assert_eq!(super::is_secret(name), plain(name), "{name:?}");
        }
        assert!(names.iter().filter(|n| plain(n)).count() > 20);
        assert!(names.iter().filter(|n| !plain(n)).count() > 20);
    }

    /// Secret fields are replaced at any depth, in objects within arrays too; the others,
    /// and the shape of the document, are kept.
    #[test]
    fn secret_fields_are_redacted_at_any_depth() {
        let mut document = serde_json::json!({
            "appKey": "k1",
            "orders": [{"password": "p1", "count": 2}, {"nested": {"userToken": {"a": 1}}}],
            "name": "token",
        });
        super::redact(&mut document);
        assert_eq!(
            document,
            serde_json::json!({
                "appKey": super::REDACTED,
                "orders": [{"password": super::REDACTED, "count": 2},
                           {"nested": {"userToken": super::REDACTED}}],
                "name": "token",
            })
        );
    }
}
