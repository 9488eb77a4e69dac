//! The rules: for each kind of change and the direction the touched part travels in, what
//! it does to each consumer. `cargo xtask spec-diff-corpus` proves every rule against the
//! compilers (see `corpus.rs`); the comments say why each verdict is what it is.
//!
//! The consumers:
//!
//! * `wire`: the documents as a contract on JSON. Breaking when a request valid before is
//!   now refused, or a reply valid before is now refused by a reader that follows the new
//!   documents (the valid set narrows in the direction the part travels).
//! * `rust`: a program on `licensing-sdk`, upgraded to the SDK generated from the new
//!   documents. The generated structs have public fields and no `#[non_exhaustive]`, so a
//!   struct literal or a destructuring names every field; the enums (tolerant ones
//!   included) are exhaustive, so a `match` names every variant (README shows such a match
//!   on the per-operation error codes). That is also what cargo-semver-checks holds the
//!   crate to. Plus what it does at run time: requests refused by the builder or the
//!   generated types, replies valid before that no longer decode.
//! * `typescript`: code on openapi-typescript's types that writes request bodies and
//!   parameters as object literals and reads every documented property of a reply.
//! * `python`: code on openapi-python-client's models (literal enums) that builds requests
//!   with keyword arguments and reads reply attributes, type-checked by mypy, plus parsing
//!   replies valid before with the new models and replies valid now with the old ones
//!   (literal enums refuse values they do not list).
//! * `schemas`: a validator that uses the exported JSON Schemas (`schemas/`), finding an
//!   operation's by its `operationId` in `schemas/index.json`: breaking when a file or an
//!   operation's entry goes away, or a schema accepts less than before.

use serde::{Deserialize, Serialize};

/// One consumer's verdict on a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Compatible,
    Breaking,
}

use Verdict::{Breaking as B, Compatible as C};

/// The consumers, in report order.
pub const CONSUMERS: [&str; 5] = ["wire", "rust", "typescript", "python", "schemas"];

/// A change's verdict for each consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Verdicts {
    pub wire: Verdict,
    pub rust: Verdict,
    pub typescript: Verdict,
    pub python: Verdict,
    pub schemas: Verdict,
}

impl Verdicts {
    const fn new(v: [Verdict; 5]) -> Verdicts {
        Verdicts {
            wire: v[0],
            rust: v[1],
            typescript: v[2],
            python: v[3],
            schemas: v[4],
        }
    }

    pub const NONE: Verdicts = Verdicts::new([C; 5]);

    pub fn get(&self, consumer: &str) -> Option<Verdict> {
        Some(match consumer {
            "wire" => self.wire,
            "rust" => self.rust,
            "typescript" => self.typescript,
            "python" => self.python,
            "schemas" => self.schemas,
            _ => return None,
        })
    }

    pub fn all(&self) -> [Verdict; 5] {
        [
            self.wire,
            self.rust,
            self.typescript,
            self.python,
            self.schemas,
        ]
    }

    /// The worse verdict for each consumer.
    pub fn max(self, other: Verdicts) -> Verdicts {
        let (a, b) = (self.all(), other.all());
        Verdicts::new([
            a[0].max(b[0]),
            a[1].max(b[1]),
            a[2].max(b[2]),
            a[3].max(b[3]),
            a[4].max(b[4]),
        ])
    }

    pub fn any_breaking(&self) -> bool {
        self.all().contains(&B)
    }
}

/// Where the changed part travels: in requests, in replies, or both (a schema that
/// requests and replies share, or one no operation uses, judged both ways).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Request,
    Reply,
    Both,
}

/// What changed, as far as the rules care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    OperationAdded,
    OperationRemoved,
    /// Same method and path, another `operationId`.
    OperationRenamed,
    PathChanged,
    MethodChanged,
    ParameterAdded {
        required: bool,
    },
    ParameterRemoved,
    ErrorCodeAdded,
    ErrorCodeRemoved,
    SchemaAdded,
    SchemaRemoved,
    SchemaRenamed,
    PropertyAdded {
        required: bool,
    },
    PropertyRemoved {
        required: bool,
        /// The object refuses properties it does not list (`additionalProperties: false`).
        closed: bool,
    },
    /// A property or parameter removed and one of the same shape added.
    PropertyRenamed {
        required: bool,
        closed: bool,
    },
    RequiredToOptional {
        /// The Rust type changes (`T` to `Option<T>`); not for lists, which typify keeps as
        /// `Vec<T>` either way.
        rust_type: bool,
    },
    OptionalToRequired {
        rust_type: bool,
    },
    TypeChanged,
    /// Only the width of a number (`int32` to `int64`): the JSON types stay.
    FormatWidened,
    FormatNarrowed,
    EnumValueAdded,
    EnumValueRemoved,
    /// The Rust name of an enum value (`x-enum-varnames`), its value unchanged.
    EnumVariantRenamed,
    /// A bound, pattern or length rule now accepts less. `checked` when the SDK's
    /// generated types enforce it (string lengths and patterns, via typify's newtypes);
    /// `rust_type` when the Rust type changes with it (a string gains or loses its
    /// newtype, an integer becomes `NonZeroU32`).
    Tightened {
        checked: bool,
        rust_type: bool,
    },
    Loosened {
        rust_type: bool,
    },
    NullableAdded {
        rust_type: bool,
    },
    NullableRemoved {
        rust_type: bool,
    },
    /// Descriptions, summaries, examples, titles, defaults, `x-enum-descriptions`.
    Documentation,
    /// Anything the rules do not classify: breaking for everyone, to be looked at.
    Other,
}

/// The verdicts of a change of `kind` to a part that travels in `dir`.
pub fn verdicts(kind: &Kind, dir: Dir) -> Verdicts {
    match dir {
        Dir::Both => one(kind, Dir::Request).max(one(kind, Dir::Reply)),
        d => one(kind, d),
    }
}

fn rust_if(changed: bool) -> Verdict {
    if changed { B } else { C }
}

fn one(kind: &Kind, dir: Dir) -> Verdicts {
    let request = dir == Dir::Request;
    // [wire, rust, typescript, python, schemas]
    let v = match *kind {
        Kind::OperationAdded | Kind::SchemaAdded | Kind::Documentation => [C; 5],
        // Every client loses the call, and the schemas' index its entry (the component
        // schemas stay).
        Kind::OperationRemoved => [B; 5],
        // Rust's method and Python's module are named after the operationId, and so is the
        // schemas' index entry; openapi-fetch calls by path.
        Kind::OperationRenamed => [C, B, C, B, B],
        // The generated Rust and Python calls hide the path and method; TypeScript's
        // `paths` type is keyed by both.
        Kind::PathChanged | Kind::MethodChanged => [B, C, B, C, C],
        // A parameter the caller never sets is refused by the server, by the SDK's builder
        // at run time ("required"), and by the types of TypeScript and Python.
        Kind::ParameterAdded { required: true } => [B, B, B, B, C],
        Kind::ParameterAdded { required: false } => [C; 5],
        // The server ignores a query parameter it does not read; every client loses the
        // setter, the property or the keyword.
        Kind::ParameterRemoved => [C, B, B, B, C],
        // The per-operation error enums (`order::errors`) gain or lose a variant; the reply
        // envelope's `code` schema does not change.
        Kind::ErrorCodeAdded | Kind::ErrorCodeRemoved => [C, B, C, C, C],
        // The JSON stays, the name that types and files are generated under goes.
        Kind::SchemaRemoved | Kind::SchemaRenamed => [C, B, B, B, B],
        // A new field of a generated struct breaks a Rust struct literal; nothing else.
        Kind::PropertyAdded { required: false } => [C, B, C, C, C],
        Kind::PropertyAdded { required: true } if request => [B, B, B, B, B],
        // A reply valid before lacks it: the wire and the schemas refuse it, Rust and
        // Python fail to decode it; TypeScript's reading code is unaffected.
        Kind::PropertyAdded { required: true } => [B, B, C, B, B],
        Kind::PropertyRemoved { closed, .. } if request => {
            let refused = if closed { B } else { C };
            [refused, B, B, B, refused]
        }
        // The old name is refused where the object is closed, and a required new name is
        // missing from every request written before.
        Kind::PropertyRenamed { closed, required } if request => {
            let refused = if closed || required { B } else { C };
            [refused, B, B, B, refused]
        }
        Kind::PropertyRemoved { required, .. } => {
            // Readers lose the field whatever its requiredness; a reply valid before still
            // validates (undeclared properties are allowed).
            let _ = required;
            [C, B, B, B, C]
        }
        Kind::PropertyRenamed { required, .. } => {
            // The removal's verdicts and the addition's together.
            let added = if required {
                [B, B, C, B, B]
            } else {
                [C, B, C, C, C]
            };
            let removed = [C, B, B, B, C];
            let mut v = [C; 5];
            for i in 0..5 {
                v[i] = added[i].max(removed[i]);
            }
            v
        }
        Kind::RequiredToOptional { rust_type } if request => [C, rust_if(rust_type), C, C, C],
        // Readers now get `undefined`/`Unset`/`None` where they had a value.
        Kind::RequiredToOptional { .. } => [C, B, B, B, C],
        Kind::OptionalToRequired { .. } if request => [B, B, B, B, B],
        // A reply valid before may lack it: refused by the wire and the schemas, fails to
        // decode in Rust and Python; TypeScript reads `T` where it read `T | undefined`.
        Kind::OptionalToRequired { .. } => [B, B, C, B, B],
        Kind::TypeChanged => [B, B, B, B, B],
        // Rust's `i32` becomes `i64` (or back); TypeScript and Python have one number type.
        Kind::FormatWidened => [C, B, C, C, C],
        Kind::FormatNarrowed => [B, B, C, C, B],
        // Enum values are variants in Rust (an exhaustive `match` breaks either way); an
        // added value widens what readers must handle in TypeScript and Python (whose
        // literal enums refuse a value they do not list).
        Kind::EnumValueAdded if request => [C, B, C, C, C],
        Kind::EnumValueAdded => [C, B, B, B, C],
        Kind::EnumValueRemoved if request => [B, B, B, B, B],
        // A reply valid before may carry it: Python's literal enum refuses it.
        Kind::EnumValueRemoved => [B, B, C, B, B],
        Kind::EnumVariantRenamed => [C, B, C, C, C],
        // TypeScript and Python check no bound; Rust checks string rules in requests (reply
        // schemas lose theirs before typify sees them, `reply_constraints.rs`).
        Kind::Tightened { checked, rust_type } if request => {
            [B, rust_if(checked || rust_type), C, C, B]
        }
        Kind::Tightened { .. } => [B, C, C, C, B],
        Kind::Loosened { rust_type } if request => [C, rust_if(rust_type), C, C, C],
        Kind::Loosened { .. } => [C; 5],
        Kind::NullableAdded { rust_type } if request => [C, rust_if(rust_type), C, C, C],
        // Readers may now get null.
        Kind::NullableAdded { .. } => [C, B, B, B, C],
        Kind::NullableRemoved { rust_type } if request => [B, rust_if(rust_type), B, B, B],
        Kind::NullableRemoved { rust_type } => [B, rust_if(rust_type), C, B, B],
        Kind::Other => [B; 5],
    };
    Verdicts::new(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_take_the_worse_verdict() {
        let req = verdicts(&Kind::EnumValueAdded, Dir::Request);
        let rep = verdicts(&Kind::EnumValueAdded, Dir::Reply);
        assert_eq!(req.typescript, C);
        assert_eq!(rep.typescript, B);
        assert_eq!(verdicts(&Kind::EnumValueAdded, Dir::Both), req.max(rep));
    }

    #[test]
    fn documentation_breaks_nobody_and_removal_breaks_every_client() {
        assert!(!verdicts(&Kind::Documentation, Dir::Both).any_breaking());
        let removed = verdicts(&Kind::OperationRemoved, Dir::Both);
        assert_eq!(
            [
                removed.wire,
                removed.rust,
                removed.typescript,
                removed.python,
                removed.schemas
            ],
            [B; 5]
        );
    }

    #[test]
    fn a_closed_object_refuses_a_removed_property_on_the_wire() {
        let open = Kind::PropertyRemoved {
            required: false,
            closed: false,
        };
        let closed = Kind::PropertyRemoved {
            required: false,
            closed: true,
        };
        assert_eq!(verdicts(&open, Dir::Request).wire, C);
        assert_eq!(verdicts(&closed, Dir::Request).wire, B);
    }
}
