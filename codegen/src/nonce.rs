//! Transform: `g_nonce` is declared on every operation in the spec (it is on the wire) but
//! supplied by the runtime, so it is removed before progenitor sees the operation and never
//! appears in a method signature.

use openapiv3::{OpenAPI, ReferenceOr};

use crate::spec::resolve_parameter;

/// The anti-replay query parameter.
pub const NONCE: &str = "g_nonce";

/// Removes `g_nonce` from every operation; returns how many it removed. Fails, naming the
/// operation, when one does not declare it: the spec must say what goes on the wire.
pub fn strip(spec: &mut OpenAPI) -> Result<usize, String> {
    let components = spec.components.clone();
    let mut removed = 0;
    for (path, item) in spec.paths.paths.iter_mut() {
        let ReferenceOr::Item(item) = item else {
            return Err(format!("path {path}: path items must be inline"));
        };
        let ops = [
            ("get", &mut item.get),
            ("put", &mut item.put),
            ("post", &mut item.post),
            ("delete", &mut item.delete),
            ("options", &mut item.options),
            ("head", &mut item.head),
            ("patch", &mut item.patch),
            ("trace", &mut item.trace),
        ];
        for (method, op) in ops
            .into_iter()
            .filter_map(|(m, op)| Some((m, op.as_mut()?)))
        {
            let id = op
                .operation_id
                .clone()
                .unwrap_or_else(|| format!("{} {path}", method.to_uppercase()));
            let before = op.parameters.len();
            op.parameters.retain(|p| {
                resolve_parameter(p, components.as_ref())
                    .map(|p| p.parameter_data_ref().name.as_str())
                    != Some(NONCE)
            });
            match before - op.parameters.len() {
                1 => removed += 1,
                0 => {
                    return Err(format!(
                        "{id}: does not declare the `{NONCE}` query parameter"
                    ));
                }
                _ => return Err(format!("{id}: declares `{NONCE}` more than once")),
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{load, testing::fragment};

    #[test]
    fn removes_the_nonce_from_every_operation() {
        let mut spec = load(&fragment("", "")).unwrap();
        assert_eq!(strip(&mut spec), Ok(1));
        let (_, _, op) = spec.operations().next().unwrap();
        assert_eq!(op.parameters.len(), 2, "pageNum and pageSize stay");
    }

    #[test]
    fn an_operation_without_the_nonce_is_an_error() {
        let text = fragment("", "").replace(
            "        - {name: g_nonce, in: query, required: true, schema: {type: string}}\n",
            "",
        );
        let mut spec = load(&text).unwrap();
        assert_eq!(
            strip(&mut spec),
            Err("listThings: does not declare the `g_nonce` query parameter".into())
        );
    }
}
