//! A mutation's edits: JSON Pointer (RFC 6901) tokens, RFC 6902's add, remove, replace and
//! move, and `ref`, which repoints every `$ref` equal to `from` to `to`.

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

use super::Edit;

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn split(pointer: &str) -> Result<(String, String)> {
    let i = pointer
        .rfind('/')
        .ok_or_else(|| anyhow!("`{pointer}` is not a JSON pointer"))?;
    Ok((pointer[..i].to_string(), unescape(&pointer[i + 1..])))
}

fn take(doc: &mut Value, pointer: &str) -> Result<Value> {
    let (parent, key) = split(pointer)?;
    let parent = doc
        .pointer_mut(&parent)
        .ok_or_else(|| anyhow!("no `{parent}`"))?;
    match parent {
        Value::Object(m) => m.remove(&key).ok_or_else(|| anyhow!("no `{pointer}`")),
        Value::Array(a) => {
            let i: usize = key.parse()?;
            if i >= a.len() {
                bail!("no `{pointer}`");
            }
            Ok(a.remove(i))
        }
        _ => bail!("`{pointer}`: parent is not a container"),
    }
}

fn put(doc: &mut Value, pointer: &str, value: Value) -> Result<()> {
    let (parent, key) = split(pointer)?;
    let parent = doc
        .pointer_mut(&parent)
        .ok_or_else(|| anyhow!("no `{parent}`"))?;
    match parent {
        Value::Object(m) => {
            m.insert(key, value);
        }
        Value::Array(a) if key == "-" => a.push(value),
        Value::Array(a) => {
            let i: usize = key.parse()?;
            if i > a.len() {
                bail!("`{pointer}`: index past the end");
            }
            a.insert(i, value);
        }
        _ => bail!("`{pointer}`: parent is not a container"),
    }
    Ok(())
}

fn repoint(v: &mut Value, from: &str, to: &str) -> usize {
    match v {
        Value::Object(m) => {
            let mut n = 0;
            for (k, v) in m.iter_mut() {
                if k == "$ref" && v.as_str() == Some(from) {
                    *v = Value::from(to);
                    n += 1;
                } else {
                    n += repoint(v, from, to);
                }
            }
            n
        }
        Value::Array(a) => a.iter_mut().map(|v| repoint(v, from, to)).sum(),
        _ => 0,
    }
}

/// Applies one edit to a spec's document.
pub fn edit(doc: &mut Value, e: &Edit) -> Result<()> {
    let value = || e.value.clone().ok_or_else(|| anyhow!("needs a value"));
    match e.op.as_str() {
        "add" => put(doc, &e.path, value()?),
        "remove" => take(doc, &e.path).map(drop),
        "replace" => {
            let target = doc
                .pointer_mut(&e.path)
                .ok_or_else(|| anyhow!("no `{}`", e.path))?;
            *target = value()?;
            Ok(())
        }
        "move" => {
            let from = e.from.as_deref().ok_or_else(|| anyhow!("needs from"))?;
            let v = take(doc, from)?;
            put(doc, &e.path, v)
        }
        "ref" => {
            let (from, to) = (
                e.from.as_deref().ok_or_else(|| anyhow!("needs from"))?,
                e.to.as_deref().ok_or_else(|| anyhow!("needs to"))?,
            );
            if repoint(doc, from, to) == 0 {
                bail!("no `$ref: {from}`");
            }
            Ok(())
        }
        other => bail!("unknown op `{other}`"),
    }
}
