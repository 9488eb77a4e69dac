//! An object against its other version (closed or open, each property matched by name,
//! a property removed while one of the same shape is added as one rename), and a union's
//! alternatives (by the components they name, or one by one).

use openapiv3::{AdditionalProperties, ObjectType, ReferenceOr, Schema};

use super::facts::{go_same_either_way, is_plain_list};
use super::{At, Differ, SCHEMAS, shape, to_json, view, view_boxed};
use crate::rules::Kind;

impl Differ<'_> {
    pub(super) fn object(&mut self, at: &At, a: &ObjectType, b: &ObjectType) {
        let what = at.what.clone();
        let closed = |o: &ObjectType| {
            matches!(
                o.additional_properties,
                Some(AdditionalProperties::Any(false))
            )
        };
        let (closed_before, closed_now) = (closed(a), closed(b));
        match (closed_before, closed_now) {
            (false, true) => self.push(
                at,
                Kind::Tightened {
                    checked: true,
                    rust_type: false,
                },
                format!("`{what}`: additionalProperties now false"),
            ),
            (true, false) => self.push(
                at,
                Kind::Loosened { rust_type: false },
                format!("`{what}`: additionalProperties no longer false"),
            ),
            _ => {}
        }
        let prop_json = |s: &ReferenceOr<Box<Schema>>| to_json(s);
        let mut added: Vec<&String> = b
            .properties
            .keys()
            .filter(|k| !a.properties.contains_key(*k))
            .collect();
        for (name, old_prop) in &a.properties {
            let was_required = a.required.contains(name);
            let Some(new_prop) = b.properties.get(name) else {
                let same = added.iter().position(|k| {
                    b.required.contains(*k) == was_required
                        && shape(&prop_json(&b.properties[*k]), &self.renames)
                            == shape(&prop_json(old_prop), &self.renames)
                });
                let p_at = at.child("properties", what.clone(), true);
                match same {
                    Some(i) => {
                        let k = added.remove(i);
                        let p_at = p_at.child(k, format!("{what}.{k}"), was_required);
                        self.push(
                            &p_at,
                            Kind::PropertyRenamed {
                                required: was_required,
                                closed: closed_now,
                                closed_before,
                            },
                            format!("`{what}.{name}` renamed `{k}`"),
                        );
                    }
                    None => {
                        let p_at = p_at.child(name, format!("{what}.{name}"), was_required);
                        self.push(
                            &p_at,
                            Kind::PropertyRemoved {
                                required: was_required,
                                closed: closed_now,
                            },
                            format!(
                                "`{what}.{name}` ({}) removed",
                                if was_required { "required" } else { "optional" }
                            ),
                        );
                    }
                }
                continue;
            };
            let is_required = b.required.contains(name);
            let p_at = at.child("properties", what.clone(), true).child(
                name,
                format!("{what}.{name}"),
                is_required,
            );
            // typify keeps an optional list a `Vec` (empty when absent): its type does not
            // follow its requiredness, unless it is nullable.
            let rust_type = !is_plain_list(new_prop) || !is_plain_list(old_prop);
            let go_type = !go_same_either_way(new_prop) || !go_same_either_way(old_prop);
            match (was_required, is_required) {
                (true, false) => self.push(
                    &p_at,
                    Kind::RequiredToOptional { rust_type, go_type },
                    format!("`{what}.{name}`: now optional"),
                ),
                (false, true) => self.push(
                    &p_at,
                    Kind::OptionalToRequired { rust_type, go_type },
                    format!("`{what}.{name}`: now required"),
                ),
                _ => {}
            }
            self.schema(&p_at, view_boxed(old_prop), view_boxed(new_prop));
        }
        for name in added {
            let required = b.required.contains(name);
            let p_at = at.child("properties", what.clone(), true).child(
                name,
                format!("{what}.{name}"),
                required,
            );
            self.push(
                &p_at,
                Kind::PropertyAdded {
                    required,
                    closed: closed_before,
                },
                format!(
                    "`{what}.{name}` ({}) added",
                    if required { "required" } else { "optional" }
                ),
            );
        }
    }

    pub(super) fn alternatives(
        &mut self,
        at: &At,
        a: &[ReferenceOr<Schema>],
        b: &[ReferenceOr<Schema>],
    ) {
        let what = at.what.clone();
        let refs = |v: &[ReferenceOr<Schema>], old: bool| -> Option<Vec<String>> {
            v.iter()
                .map(|s| match s {
                    ReferenceOr::Reference { reference } => {
                        let name = reference.strip_prefix(SCHEMAS)?.to_string();
                        Some(if old { self.renamed(&name) } else { name })
                    }
                    ReferenceOr::Item(_) => None,
                })
                .collect()
        };
        match (refs(a, true), refs(b, false)) {
            (Some(x), Some(y)) => {
                for r in y.iter().filter(|r| !x.contains(r)) {
                    self.push(
                        at,
                        Kind::EnumValueAdded,
                        format!("`{what}`: alternative `{r}` added"),
                    );
                }
                for r in x.iter().filter(|r| !y.contains(r)) {
                    self.push(
                        at,
                        Kind::EnumValueRemoved,
                        format!("`{what}`: alternative `{r}` removed"),
                    );
                }
            }
            _ if a.len() == b.len() => {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let i_at = at.child(&i.to_string(), format!("{what}|{i}"), at.required);
                    self.schema(&i_at, view(x), view(y));
                }
            }
            _ => self.push(at, Kind::Other, format!("`{what}`: alternatives changed")),
        }
    }
}
