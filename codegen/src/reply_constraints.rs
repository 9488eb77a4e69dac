//! Transform: request-side rules (patterns, lengths, item counts, minimum) must never
//! reject a reply, and typify enforces them while deserializing. Schemas used only by
//! replies lose them here; a schema shared by requests and replies must carry none (split
//! it instead).

use std::collections::BTreeSet;

use openapiv3::{OpenAPI, ReferenceOr, Schema, SchemaKind, Type};

use crate::spec::response_schema;

/// Clears the constraints of every reply-only schema; returns the names of the schemas it
/// changed.
pub fn strip(spec: &mut OpenAPI) -> Result<Vec<String>, String> {
    let (mut request, mut reply) = (BTreeSet::new(), BTreeSet::new());
    for (_, _, op) in spec.operations() {
        if let Some(ReferenceOr::Item(body)) = &op.request_body {
            for media in body.content.values() {
                if let Some(s) = &media.schema {
                    reachable(spec, s, &mut request);
                }
            }
        }
        for r in op.responses.responses.values() {
            if let Some(name) = response_schema(spec, r) {
                reachable(
                    spec,
                    &ReferenceOr::ref_(&format!("#/components/schemas/{name}")),
                    &mut reply,
                );
            }
        }
    }
    let Some(components) = spec.components.as_mut() else {
        return Ok(Vec::new());
    };
    let mut changed = Vec::new();
    for (name, schema) in components.schemas.iter_mut() {
        let ReferenceOr::Item(schema) = schema else {
            continue;
        };
        if !reply.contains(name) || !has_constraints(schema) {
            continue;
        }
        if request.contains(name) {
            return Err(format!(
                "schema `{name}` is used by requests and replies and carries request-side \
                 constraints; split it so replies stay tolerant"
            ));
        }
        clear_constraints(schema);
        changed.push(name.clone());
    }
    Ok(changed)
}

fn reachable(spec: &OpenAPI, schema: &ReferenceOr<Schema>, seen: &mut BTreeSet<String>) {
    match schema {
        ReferenceOr::Reference { reference } => {
            let Some(name) = reference.strip_prefix("#/components/schemas/") else {
                return;
            };
            if !seen.insert(name.to_string()) {
                return;
            }
            if let Some(s) = spec.components.as_ref().and_then(|c| c.schemas.get(name)) {
                reachable(spec, s, seen);
            }
        }
        ReferenceOr::Item(s) => {
            for child in children(s) {
                reachable(spec, &child, seen);
            }
        }
    }
}

fn children(s: &Schema) -> Vec<ReferenceOr<Schema>> {
    let unbox = |r: &ReferenceOr<Box<Schema>>| match r {
        ReferenceOr::Item(b) => ReferenceOr::Item((**b).clone()),
        ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
    };
    match &s.schema_kind {
        SchemaKind::Type(Type::Object(o)) => o.properties.values().map(unbox).collect(),
        SchemaKind::Type(Type::Array(a)) => a.items.iter().map(unbox).collect(),
        SchemaKind::OneOf { one_of: v }
        | SchemaKind::AnyOf { any_of: v }
        | SchemaKind::AllOf { all_of: v } => v.clone(),
        _ => Vec::new(),
    }
}

fn has_constraints(s: &Schema) -> bool {
    let mut copy = s.clone();
    clear_constraints(&mut copy);
    copy != *s
}

fn clear_constraints(s: &mut Schema) {
    match &mut s.schema_kind {
        SchemaKind::Type(Type::String(t)) => {
            t.pattern = None;
            t.min_length = None;
            t.max_length = None;
        }
        SchemaKind::Type(Type::Integer(t)) => {
            t.minimum = None;
            t.maximum = None;
        }
        SchemaKind::Type(Type::Array(a)) => {
            a.min_items = None;
            a.max_items = None;
            if let Some(ReferenceOr::Item(i)) = &mut a.items {
                clear_constraints(i);
            }
        }
        SchemaKind::Type(Type::Object(o)) => {
            for p in o.properties.values_mut() {
                if let ReferenceOr::Item(p) = p {
                    clear_constraints(p);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{load, testing::fragment};

    #[test]
    fn reply_only_schemas_lose_their_constraints() {
        let mut spec = load(&fragment("", "")).unwrap();
        assert_eq!(strip(&mut spec), Ok(vec!["Thing".to_string()]));
        let thing = spec.components.as_ref().unwrap().schemas["Thing"]
            .as_item()
            .unwrap();
        assert!(!has_constraints(thing));
        // Nothing left to change the second time.
        assert_eq!(strip(&mut spec), Ok(vec![]));
    }

    #[test]
    fn a_constrained_schema_shared_with_requests_is_an_error() {
        let text = fragment("", "").replace(
            "      responses:",
            "      requestBody:\n        content: {application/json: {schema: {$ref: '#/components/schemas/Thing'}}}\n      responses:",
        );
        let mut spec = load(&text).unwrap();
        assert!(strip(&mut spec).unwrap_err().starts_with(
            "schema `Thing` is used by requests and replies and carries request-side constraints"
        ));
    }
}
