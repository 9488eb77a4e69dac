//! An admin request's JSON body read as its type. A body is read straight into the type,
//! with no JSON tree between: a seed of 50,000 assets is 7 MB of text and many times that
//! as a tree, and the tree (cloned once more for the error's sake) was what made a seed
//! through the admin API peak 80 MB above the same seed given at start. The tree is built
//! only when the body is refused, to name the field.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::AdminError;

/// A JSON body as `T`; the error names the field by its path.
pub(crate) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, AdminError> {
    let not_json =
        |e: serde_json::Error| AdminError::bad(format!("the body is not valid JSON: {e}"));
    if let Some(path) = null_in(body).map_err(not_json)? {
        return Err(null_refused(path));
    }
    match serde_json::from_slice::<T>(body) {
        Ok(t) => Ok(t),
        // Read again as a tree, which names the field (and takes what a tree takes: the
        // last of two equal keys).
        Err(_) => from_value(serde_json::from_slice(body).map_err(not_json)?),
    }
}

/// A JSON value as `T`; the error names the field by its path. `null` is refused where
/// the schema gives a type (only a body-field match's `equals` may be any JSON): the admin
/// API is the simulator's own and says exactly what it takes.
fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, AdminError> {
    if let Some(path) = null_at(&value, &mut String::new()) {
        return Err(null_refused(path));
    }
    match T::deserialize(&value) {
        Ok(t) => Ok(t),
        Err(e) => match &value {
            Value::Object(object) => match crate::ops::locate::<T>(object, &e) {
                (Some(field), message) => Err(AdminError::field(field, message)),
                (None, message) => Err(AdminError::bad(message)),
            },
            _ => Err(AdminError::bad(format!(
                "the body must be a JSON object: {e}"
            ))),
        },
    }
}

fn null_refused(path: String) -> AdminError {
    AdminError::field(path, "must not be null")
}

/// Where a tree's first `null` is, keys in the tree's order; `equals` and `patch` hold
/// any JSON, `null` included.
fn null_at(value: &Value, path: &mut String) -> Option<String> {
    match value {
        Value::Null => Some(path.clone()),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if any_json(k) {
                return None;
            }
            let len = path.len();
            push_key(path, k);
            let found = null_at(v, path);
            path.truncate(len);
            found
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let found = null_at(v, path);
            path.truncate(len);
            found
        }),
        _ => None,
    }
}

/// The keys whose values may be any JSON, `null` included.
const ANY_JSON: &[&str] = &["equals", "patch"];

fn any_json(key: &str) -> bool {
    ANY_JSON.contains(&key)
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// As [`null_at`] over a JSON text, in one pass and without the tree (keys in the text's
/// order, which names the same `null` when there is one): the sandbox client's reader, which
/// a seed read by `licensing-sandbox-client` goes through too.
fn null_in(body: &[u8]) -> Result<Option<String>, serde_json::Error> {
    licensing_sandbox_client::first_null(body, ANY_JSON)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[test]
    fn the_text_and_the_tree_name_the_same_null() {
        for text in [
            r#"{"a": 1, "b": {"c": [1, null]}}"#,
            r#"{"a": null}"#,
            r#"[{"x": 1}, {"y": null}]"#,
            r#"null"#,
        ] {
            let tree: Value = serde_json::from_str(text).unwrap();
            let want = null_at(&tree, &mut String::new());
            assert!(want.is_some(), "{text}");
            assert_eq!(null_in(text.as_bytes()).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn any_json_may_hold_null_and_other_values_none() {
        let text = r#"{"match": {"equals": null}, "patch": {"a": null}, "n": [1, "s", true, 2.5]}"#;
        assert_eq!(null_in(text.as_bytes()).unwrap(), None);
        let tree: Value = serde_json::from_str(text).unwrap();
        assert_eq!(null_at(&tree, &mut String::new()), None);
    }

    #[test]
    fn a_null_is_refused_by_its_path_and_bad_text_as_not_json() {
        #[derive(Debug, Deserialize)]
        struct Body {
            #[allow(dead_code)]
            name: Option<String>,
        }
        let e = parse::<Body>(br#"{"name": null}"#).unwrap_err();
        assert!(format!("{e:?}").contains("name"), "{e:?}");
        assert!(format!("{e:?}").contains("must not be null"), "{e:?}");
        let e = parse::<Body>(br#"{"name": "a"} trailing"#).unwrap_err();
        assert!(format!("{e:?}").contains("not valid JSON"), "{e:?}");
        assert_eq!(
            parse::<Body>(br#"{"name": "a"}"#).unwrap().name.as_deref(),
            Some("a")
        );
    }

    #[test]
    fn a_wrong_type_is_named_by_its_field() {
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            #[allow(dead_code)]
            max_count: u32,
        }
        let e = parse::<Body>(br#"{"maxCount": "many"}"#).unwrap_err();
        assert!(format!("{e:?}").contains("maxCount"), "{e:?}");
    }
}
