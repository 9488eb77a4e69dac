//! A schema against its other version: a reference where the component is compared, an
//! inline schema by its documentation, nullability and the keywords of its type (an
//! object's properties and a union's alternatives are `objects.rs`'), every component
//! schema once where it is defined.

use std::collections::BTreeSet;

use openapiv3::{
    ArrayType, IntegerType, NumberType, Schema, SchemaData, SchemaKind, StringType, Type,
};
use serde_json::Value;

use super::facts::{kind_name, rust_integer, show};
use super::{At, Differ, S, SCHEMAS, schema, schemas, shape, to_json, view, view_boxed};
use crate::rules::Kind;

impl Differ<'_> {
    pub(super) fn components(&mut self) {
        let old_names: Vec<String> = schemas(self.old).map(|(n, _)| n.clone()).collect();
        let new_names: BTreeSet<String> = schemas(self.new).map(|(n, _)| n.clone()).collect();
        for name in &old_names {
            let new_name = self.renamed(name);
            let old_schema = schema(self.old, name).expect("listed");
            let Some(new_schema) = schema(self.new, &new_name) else {
                let at = self.component_at(name);
                self.push(&at, Kind::SchemaRemoved, format!("schema `{name}` removed"));
                continue;
            };
            let at = self.component_at(&new_name);
            if new_name != *name {
                self.push(
                    &at,
                    Kind::SchemaRenamed,
                    format!("schema `{name}` renamed `{new_name}`"),
                );
            }
            self.schema(&at, view(old_schema), view(new_schema));
        }
        for name in &new_names {
            if !old_names.contains(name) && !self.renames.values().any(|n| n == name) {
                let at = self.component_at(name);
                self.push(&at, Kind::SchemaAdded, format!("schema `{name}` added"));
            }
        }
    }

    /// Two schemas at the same place; a reference to a component is compared where the
    /// component is defined.
    pub(super) fn schema(&mut self, at: &At, old: S<'_>, new: S<'_>) {
        match (old, new) {
            (S::Ref(o), S::Ref(n)) => {
                let o_name = o.strip_prefix(SCHEMAS).unwrap_or(o);
                let n_name = n.strip_prefix(SCHEMAS).unwrap_or(n);
                if self.renamed(o_name) != n_name {
                    self.push(
                        at,
                        Kind::TypeChanged,
                        format!("`{}`: now `{n_name}` (was `{o_name}`)", at.what),
                    );
                }
            }
            (S::Item(o), S::Item(n)) => self.inline(at, o, n),
            _ => self.push(
                at,
                Kind::TypeChanged,
                format!(
                    "`{}`: a reference replaced by an inline schema, or back",
                    at.what
                ),
            ),
        }
    }

    /// Two inline schemas: their documentation and nullability, then the keywords of their
    /// type (or the type itself, changed).
    fn inline(&mut self, at: &At, o: &Schema, n: &Schema) {
        let what = at.what.clone();
        self.documentation(at, o, n);
        self.nullable(at, &o.schema_data, &n.schema_data);
        match (&o.schema_kind, &n.schema_kind) {
            (SchemaKind::Type(Type::String(a)), SchemaKind::Type(Type::String(b))) => {
                self.string(at, (o, a), (n, b));
            }
            (SchemaKind::Type(Type::Integer(a)), SchemaKind::Type(Type::Integer(b))) => {
                self.integer(at, (o, a), (n, b));
            }
            (SchemaKind::Type(Type::Number(a)), SchemaKind::Type(Type::Number(b))) => {
                self.number(at, a, b);
            }
            (SchemaKind::Type(Type::Boolean(_)), SchemaKind::Type(Type::Boolean(_))) => {}
            (SchemaKind::Type(Type::Object(a)), SchemaKind::Type(Type::Object(b))) => {
                self.object(at, a, b);
            }
            (SchemaKind::Type(Type::Array(a)), SchemaKind::Type(Type::Array(b))) => {
                self.array(at, a, b);
            }
            (SchemaKind::OneOf { one_of: a }, SchemaKind::OneOf { one_of: b })
            | (SchemaKind::AnyOf { any_of: a }, SchemaKind::AnyOf { any_of: b })
            | (SchemaKind::AllOf { all_of: a }, SchemaKind::AllOf { all_of: b }) => {
                self.alternatives(at, a, b);
                let (od, nd) = (&o.schema_data, &n.schema_data);
                if to_json(&od.discriminator) != to_json(&nd.discriminator) && a.len() == b.len() {
                    self.push(at, Kind::Other, format!("`{what}`: discriminator changed"));
                }
            }
            (SchemaKind::Any(a), SchemaKind::Any(b)) => {
                if shape(&to_json(a), &self.renames) != shape(&to_json(b), &self.renames) {
                    self.push(at, Kind::Other, format!("`{what}`: schema changed"));
                }
            }
            (a, b) => self.push(
                at,
                Kind::TypeChanged,
                format!("`{what}`: type {} → {}", kind_name(a), kind_name(b)),
            ),
        }
    }

    /// What only documents a schema: its title, description, example, default, deprecation
    /// and enum descriptions.
    fn documentation(&mut self, at: &At, o: &Schema, n: &Schema) {
        let (od, nd) = (&o.schema_data, &n.schema_data);
        // An enum's descriptions change with its values: that change is reported as the
        // values', not once more as documentation.
        let values_changed = |s: &Schema| match &s.schema_kind {
            SchemaKind::Type(Type::String(t)) => to_json(&t.enumeration),
            SchemaKind::Type(Type::Integer(t)) => to_json(&t.enumeration),
            _ => Value::Null,
        };
        let enum_changed = values_changed(o) != values_changed(n);
        let doc_ext = |s: &Schema| {
            if enum_changed {
                None
            } else {
                s.schema_data.extensions.get("x-enum-descriptions").cloned()
            }
        };
        if od.title != nd.title
            || od.description != nd.description
            || to_json(&od.example) != to_json(&nd.example)
            || to_json(&od.default) != to_json(&nd.default)
            || od.deprecated != nd.deprecated
            || doc_ext(o) != doc_ext(n)
        {
            self.push(
                at,
                Kind::Documentation,
                format!("`{}`: description, example or default changed", at.what),
            );
        }
    }

    fn nullable(&mut self, at: &At, od: &SchemaData, nd: &SchemaData) {
        if od.nullable == nd.nullable {
            return;
        }
        let what = &at.what;
        let rust_type = at.required;
        if nd.nullable {
            self.push(
                at,
                Kind::NullableAdded { rust_type },
                format!("`{what}`: now nullable"),
            );
        } else {
            self.push(
                at,
                Kind::NullableRemoved { rust_type },
                format!("`{what}`: no longer nullable"),
            );
        }
    }

    /// A string's format, enum values and their names, pattern and lengths.
    fn string(&mut self, at: &At, (o, a): (&Schema, &StringType), (n, b): (&Schema, &StringType)) {
        let what = at.what.clone();
        if to_json(&a.format) != to_json(&b.format) {
            self.push(
                at,
                Kind::TypeChanged,
                format!(
                    "`{what}`: format {} → {}",
                    to_json(&a.format),
                    to_json(&b.format)
                ),
            );
        }
        let values =
            |v: &[Option<String>]| -> Vec<String> { v.iter().flatten().cloned().collect() };
        self.enum_values(at, values(&a.enumeration), values(&b.enumeration));
        if varnames(o) != varnames(n) && a.enumeration == b.enumeration {
            self.push(
                at,
                Kind::EnumVariantRenamed,
                format!("`{what}`: x-enum-varnames changed"),
            );
        }
        let constrained = |t: &StringType| {
            t.pattern.is_some() || t.min_length.is_some() || t.max_length.is_some()
        };
        let rust_type = constrained(a) != constrained(b);
        if a.pattern != b.pattern {
            let kind = match (&a.pattern, &b.pattern) {
                (_, None) => Kind::Loosened { rust_type },
                (None, _) => Kind::Tightened {
                    checked: true,
                    rust_type,
                },
                // Two patterns are not compared: either may accept what the other refuses.
                _ => Kind::Changed {
                    checked: true,
                    rust_type,
                },
            };
            self.push(
                at,
                kind,
                format!(
                    "`{what}`: pattern {} → {}",
                    show(&a.pattern),
                    show(&b.pattern)
                ),
            );
        }
        let len = |x: Option<usize>| x.map(|v| v as i64);
        self.bound(
            at,
            "maxLength",
            len(a.max_length),
            len(b.max_length),
            true,
            rust_type,
            true,
        );
        self.bound(
            at,
            "minLength",
            len(a.min_length),
            len(b.min_length),
            false,
            rust_type,
            true,
        );
    }

    /// An integer's format, enum values and their names, and bounds.
    fn integer(
        &mut self,
        at: &At,
        (o, a): (&Schema, &IntegerType),
        (n, b): (&Schema, &IntegerType),
    ) {
        let what = at.what.clone();
        let format = |t: &IntegerType| to_json(&t.format);
        let (fa, fb) = (format(a), format(b));
        if fa != fb {
            let kind = match (fa.as_str(), fb.as_str()) {
                (Some("int32"), Some("int64")) => Kind::FormatWidened,
                (Some("int64"), Some("int32")) => Kind::FormatNarrowed,
                _ => Kind::TypeChanged,
            };
            self.push(at, kind, format!("`{what}`: format {fa} → {fb}"));
        }
        let values =
            |v: &[Option<i64>]| -> Vec<String> { v.iter().flatten().map(i64::to_string).collect() };
        self.enum_values(at, values(&a.enumeration), values(&b.enumeration));
        if varnames(o) != varnames(n) && a.enumeration == b.enumeration {
            self.push(
                at,
                Kind::EnumVariantRenamed,
                format!("`{what}`: x-enum-varnames changed"),
            );
        }
        let rust_type = rust_integer(a) != rust_integer(b);
        let min = |t: &IntegerType| t.minimum.map(|m| m + i64::from(t.exclusive_minimum));
        let max = |t: &IntegerType| t.maximum.map(|m| m - i64::from(t.exclusive_maximum));
        self.bound(at, "maximum", max(a), max(b), true, rust_type, false);
        self.bound(at, "minimum", min(a), min(b), false, rust_type, false);
    }

    fn number(&mut self, at: &At, a: &NumberType, b: &NumberType) {
        let what = &at.what;
        if to_json(&a.format) != to_json(&b.format) {
            self.push(at, Kind::TypeChanged, format!("`{what}`: format changed"));
        }
        let bounds = |t: &NumberType| {
            to_json(&(
                t.minimum,
                t.maximum,
                t.exclusive_minimum,
                t.exclusive_maximum,
            ))
        };
        if bounds(a) != bounds(b) {
            // Not ordered here: either way round may refuse a value.
            self.push(
                at,
                Kind::Changed {
                    checked: false,
                    rust_type: false,
                },
                format!("`{what}`: bounds changed"),
            );
        }
    }

    /// A list's items, item counts and uniqueness.
    fn array(&mut self, at: &At, a: &ArrayType, b: &ArrayType) {
        let what = at.what.clone();
        match (&a.items, &b.items) {
            (Some(x), Some(y)) => {
                let i_at = at.child("items", format!("{what}[]"), true);
                self.schema(&i_at, view_boxed(x), view_boxed(y));
            }
            (None, None) => {}
            _ => self.push(at, Kind::TypeChanged, format!("`{what}`: items changed")),
        }
        // typify ignores item counts; the SDK checks none from the spec.
        let counts = |x: Option<usize>| x.map(|v| v as i64);
        self.bound(
            at,
            "maxItems",
            counts(a.max_items),
            counts(b.max_items),
            true,
            false,
            false,
        );
        self.bound(
            at,
            "minItems",
            counts(a.min_items),
            counts(b.min_items),
            false,
            false,
            false,
        );
        if a.unique_items != b.unique_items {
            self.push(at, Kind::Other, format!("`{what}`: uniqueItems changed"));
        }
    }

    fn enum_values(&mut self, at: &At, old: Vec<String>, new: Vec<String>) {
        for v in &new {
            if !old.contains(v) {
                self.push(
                    at,
                    Kind::EnumValueAdded,
                    format!("`{}`: value `{v}` added", at.what),
                );
            }
        }
        for v in &old {
            if !new.contains(v) {
                self.push(
                    at,
                    Kind::EnumValueRemoved,
                    format!("`{}`: value `{v}` removed", at.what),
                );
            }
        }
    }

    /// A bound that is an upper one (`upper`) or a lower one; `checked` when the SDK's
    /// generated types enforce it.
    #[allow(clippy::too_many_arguments)]
    fn bound(
        &mut self,
        at: &At,
        name: &str,
        old: Option<i64>,
        new: Option<i64>,
        upper: bool,
        rust_type: bool,
        checked: bool,
    ) {
        let tightened = match (old, new) {
            (a, b) if a == b => return,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => (b < a) == upper,
            (None, None) => return,
        };
        let kind = if tightened {
            Kind::Tightened { checked, rust_type }
        } else {
            Kind::Loosened { rust_type }
        };
        let show = |v: Option<i64>| v.map_or("none".to_string(), |v| v.to_string());
        self.push(
            at,
            kind,
            format!(
                "`{}`: {name} {} → {} ({})",
                at.what,
                show(old),
                show(new),
                if tightened { "tightened" } else { "loosened" }
            ),
        );
    }
}

/// A string or integer enum's variant names (`x-enum-varnames`), as the spec gives them.
fn varnames(s: &Schema) -> Option<Value> {
    s.schema_data.extensions.get("x-enum-varnames").cloned()
}
