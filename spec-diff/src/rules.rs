//! The rules: for each kind of change and the direction the touched part travels in, what
//! it does to each consumer. The corpus in the repository (`spec-diff/corpus/`, `cargo
//! xtask spec-diff-corpus`) proves every rule against the compilers; the comments say why
//! each verdict is what it is.
//!
//! The consumers:
//!
//! * `wire_old_clients`: the documents as a contract on JSON, for clients written against
//!   the old documents talking to a deployment of the new ones (the platform deploys
//!   first). Breaking when a request valid before is now refused (the valid requests
//!   narrow), or a reply the new documents allow is refused by a reader that follows the
//!   old ones (the valid replies widen).
//! * `wire_new_clients`: clients written against the new documents talking to a
//!   deployment of the old ones (a partner upgrades first). Breaking when a request the
//!   new documents allow is refused by the old deployment (the valid requests widen: an
//!   operation added, an enum value added, a field the old object refuses), or a reply
//!   valid before is refused by a reader that follows the new documents (the valid
//!   replies narrow). See [`wire`].
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
//! * `java`: code on openapi-generator's `java` client (library `native`): it sets every
//!   documented property of a request model through its fluent setters, reads every property
//!   of a reply model through its getters, names every enum constant, and calls every
//!   operation with every parameter (the `native` methods take them positionally), as javac
//!   compiles it. Its types do not follow requiredness (boxed types, no validation) or
//!   nullability (`openApiNullable=false`).
//! * `go`: code on oapi-codegen's models and client that writes request structs as keyed
//!   literals setting every field, reads every field of a reply struct into a variable of
//!   its old type, names every enum constant and calls every operation, as `go build`
//!   compiles it. An optional or nullable field is a pointer and a required one is not,
//!   so requiredness is in the types.
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

/// The consumers, in report order (the JSON keys and the mutations' `expect` keys).
pub const CONSUMERS: [&str; 8] = [
    "wire_old_clients",
    "wire_new_clients",
    "rust",
    "typescript",
    "python",
    "java",
    "go",
    "schemas",
];

/// A change's verdict for each consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Verdicts {
    pub wire_old_clients: Verdict,
    pub wire_new_clients: Verdict,
    pub rust: Verdict,
    pub typescript: Verdict,
    pub python: Verdict,
    pub java: Verdict,
    pub go: Verdict,
    pub schemas: Verdict,
}

impl Verdicts {
    const fn new(v: [Verdict; 8]) -> Verdicts {
        Verdicts {
            wire_old_clients: v[0],
            wire_new_clients: v[1],
            rust: v[2],
            typescript: v[3],
            python: v[4],
            java: v[5],
            go: v[6],
            schemas: v[7],
        }
    }

    pub const NONE: Verdicts = Verdicts::new([C; 8]);

    pub fn get(&self, consumer: &str) -> Option<Verdict> {
        let i = CONSUMERS.iter().position(|c| *c == consumer)?;
        Some(self.all()[i])
    }

    /// In the order of [`CONSUMERS`].
    pub fn all(&self) -> [Verdict; 8] {
        [
            self.wire_old_clients,
            self.wire_new_clients,
            self.rust,
            self.typescript,
            self.python,
            self.java,
            self.go,
            self.schemas,
        ]
    }

    /// The worse verdict for each consumer.
    pub fn max(self, other: Verdicts) -> Verdicts {
        let (a, b) = (self.all(), other.all());
        Verdicts::new(std::array::from_fn(|i| a[i].max(b[i])))
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
    ParameterRemoved {
        required: bool,
    },
    ErrorCodeAdded,
    ErrorCodeRemoved,
    SchemaAdded,
    SchemaRemoved,
    SchemaRenamed,
    PropertyAdded {
        required: bool,
        /// The old object refused properties it did not list (`additionalProperties:
        /// false`): a reader of the old documents refuses the new one.
        closed: bool,
    },
    PropertyRemoved {
        required: bool,
        /// The new object refuses properties it does not list (`additionalProperties: false`).
        closed: bool,
    },
    /// A property or parameter removed and one of the same shape added.
    PropertyRenamed {
        required: bool,
        /// The new object is closed (refuses the old name).
        closed: bool,
        /// The old object was closed (refuses the new name).
        closed_before: bool,
    },
    RequiredToOptional {
        /// The Rust type changes (`T` to `Option<T>`); not for lists, which typify keeps as
        /// `Vec<T>` either way.
        rust_type: bool,
        /// The Go type changes (`T` to `*T`); not for a nullable property (a pointer
        /// either way) or one of no type (`interface{}`), nor for a request body.
        go_type: bool,
    },
    OptionalToRequired {
        rust_type: bool,
        go_type: bool,
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
    /// A rule replaced by one not comparable with it (another pattern, number bounds moved
    /// apart): it may refuse values it accepted and accept values it refused.
    Changed {
        checked: bool,
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

/// What a change does to the set of JSON values (or requests) the documents allow at
/// the changed place: some allowed before are now refused (`narrows`), some refused
/// before are now allowed (`widens`). Both directions of the wire follow from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    pub narrows: bool,
    pub widens: bool,
    /// The change is to what a server routes or reads of a request (an operation, its
    /// method, path or parameters): the replies are those of the operations a client
    /// calls, so they do not widen or narrow with it.
    pub requests_only: bool,
}

pub fn reach(kind: &Kind) -> Reach {
    let r = |narrows, widens| Reach {
        narrows,
        widens,
        requests_only: false,
    };
    let routed = |narrows, widens| Reach {
        requests_only: true,
        ..r(narrows, widens)
    };
    match *kind {
        // A deployment answers an operation it does not have with 404.
        Kind::OperationAdded => routed(false, true),
        Kind::OperationRemoved => routed(true, false),
        // A server routes by method and path, never by `operationId`.
        Kind::OperationRenamed => routed(false, false),
        Kind::PathChanged | Kind::MethodChanged => routed(true, true),
        // A server ignores a query parameter or header it does not read (the conformance
        // proxy does too), and refuses a request without one it requires.
        Kind::ParameterAdded { required } => routed(required, false),
        Kind::ParameterRemoved { required } => routed(false, required),
        // The reply envelope's `code` is a string: every code is a valid reply, and the
        // documents' lists are what a client is told to expect, not a schema.
        Kind::ErrorCodeAdded | Kind::ErrorCodeRemoved => r(false, false),
        // Names of schemas are not on the wire.
        Kind::SchemaAdded | Kind::SchemaRemoved | Kind::SchemaRenamed => r(false, false),
        // An open object (no `additionalProperties: false`) allows undeclared properties,
        // so a property added is refused only by a closed old object, and one removed only
        // by a closed new one; a required one is missing from the other side's values.
        Kind::PropertyAdded { required, closed } => r(required, closed),
        Kind::PropertyRemoved { required, closed } => r(closed, required),
        Kind::PropertyRenamed {
            required,
            closed,
            closed_before,
        } => r(required || closed, required || closed_before),
        Kind::RequiredToOptional { .. } => r(false, true),
        Kind::OptionalToRequired { .. } => r(true, false),
        Kind::TypeChanged | Kind::Other | Kind::Changed { .. } => r(true, true),
        // `int32` bounds the values: an `int64` one may not fit.
        Kind::FormatWidened => r(false, true),
        Kind::FormatNarrowed => r(true, false),
        Kind::EnumValueAdded | Kind::Loosened { .. } | Kind::NullableAdded { .. } => r(false, true),
        Kind::EnumValueRemoved | Kind::Tightened { .. } | Kind::NullableRemoved { .. } => {
            r(true, false)
        }
        Kind::EnumVariantRenamed | Kind::Documentation => r(false, false),
    }
}

/// The two wire verdicts, `[old clients, new clients]`, of a change to a part travelling
/// in `dir` (`Request` or `Reply`):
///
/// * old clients against the new deployment: their requests (valid before) must still be
///   accepted, so a narrowing of requests breaks; the new deployment's replies must be
///   accepted by them, so a widening of replies breaks;
/// * new clients against the old deployment: their requests (valid now) must be accepted
///   by the old deployment, so a widening of requests breaks; the old deployment's
///   replies must be accepted by them, so a narrowing of replies breaks.
pub fn wire(kind: &Kind, dir: Dir) -> [Verdict; 2] {
    let Reach {
        narrows,
        widens,
        requests_only,
    } = reach(kind);
    match dir {
        Dir::Request => [breaks(narrows), breaks(widens)],
        Dir::Reply if requests_only => [C, C],
        Dir::Reply => [breaks(widens), breaks(narrows)],
        Dir::Both => {
            let (a, b) = (wire(kind, Dir::Request), wire(kind, Dir::Reply));
            [a[0].max(b[0]), a[1].max(b[1])]
        }
    }
}

/// Breaking when `yes`.
fn breaks(yes: bool) -> Verdict {
    if yes { B } else { C }
}

fn one(kind: &Kind, dir: Dir) -> Verdicts {
    let [old_clients, new_clients] = wire(kind, dir);
    let [rust, typescript, python, schemas] = languages(kind, dir);
    let [java, go] = java_go(kind);
    Verdicts::new([
        old_clients,
        new_clients,
        rust,
        typescript,
        python,
        java,
        go,
        schemas,
    ])
}

/// `[java, go]`: what javac and `go build` say of code written against the old generated
/// code. Neither checks a bound, a required property or an enum value at run time (Jackson
/// and encoding/json read what they are given; the Java enums have an unknown default), so
/// only the generated names and types decide.
fn java_go(kind: &Kind) -> [Verdict; 2] {
    match *kind {
        Kind::OperationAdded | Kind::SchemaAdded | Kind::Documentation => [C, C],
        // Both name the method (and Go its params, body and response types) after the
        // operationId.
        Kind::OperationRemoved | Kind::OperationRenamed => [B, B],
        // Both hide the path and method behind the operation's method.
        Kind::PathChanged | Kind::MethodChanged => [C, C],
        // `native` takes every parameter positionally, so any parameter added or removed
        // changes the method's signature; Go's query parameters are fields of the
        // operation's params struct, which a keyed literal need not name.
        Kind::ParameterAdded { .. } => [B, C],
        Kind::ParameterRemoved { .. } => [B, B],
        // The per-operation error codes (`x-error-codes`) generate nothing in either.
        Kind::ErrorCodeAdded | Kind::ErrorCodeRemoved => [C, C],
        // The JSON stays, the class or type name goes.
        Kind::SchemaRemoved | Kind::SchemaRenamed => [B, B],
        // A new setter or field that nothing written before names.
        Kind::PropertyAdded { .. } => [C, C],
        Kind::PropertyRemoved { .. } | Kind::PropertyRenamed { .. } => [B, B],
        // Go's field changes between `T` and `*T` (lists included: `*[]T`; not a nullable
        // or untyped one), in a literal and in a read alike; Java's boxed type stays.
        Kind::RequiredToOptional { go_type, .. } | Kind::OptionalToRequired { go_type, .. } => {
            [C, breaks(go_type)]
        }
        // A Java class or Go type in place of another (`int32` to `int64`: `Integer` to
        // `Long`, `int32` to `int64`).
        Kind::TypeChanged | Kind::FormatWidened | Kind::FormatNarrowed => [B, B],
        // A constant added that nothing written before names, or one it names gone.
        Kind::EnumValueAdded => [C, C],
        Kind::EnumValueRemoved => [B, B],
        // Both name constants by `x-enum-varnames`.
        Kind::EnumVariantRenamed => [B, B],
        // Neither type follows a bound or a pattern.
        Kind::Tightened { .. } | Kind::Changed { .. } | Kind::Loosened { .. } => [C, C],
        // Go's required field becomes a pointer (or stops being one) where Rust's type
        // changes; Java's type stays.
        Kind::NullableAdded { rust_type } | Kind::NullableRemoved { rust_type } => {
            [C, breaks(rust_type)]
        }
        Kind::Other => [B, B],
    }
}

/// `[rust, typescript, python, schemas]`.
fn languages(kind: &Kind, dir: Dir) -> [Verdict; 4] {
    let request = dir == Dir::Request;
    match *kind {
        Kind::OperationAdded | Kind::SchemaAdded | Kind::Documentation => [C; 4],
        // Every client loses the call, and the schemas' index its entry (the component
        // schemas stay).
        Kind::OperationRemoved => [B; 4],
        // Rust's method and Python's module are named after the operationId, and so is the
        // schemas' index entry; openapi-fetch calls by path.
        Kind::OperationRenamed => [B, C, B, B],
        // The generated Rust and Python calls hide the path and method; TypeScript's
        // `paths` type is keyed by both.
        Kind::PathChanged | Kind::MethodChanged => [C, B, C, C],
        // A parameter the caller never sets is refused by the SDK's builder at run time
        // ("required"), and by the types of TypeScript and Python.
        Kind::ParameterAdded { required: true } => [B, B, B, C],
        Kind::ParameterAdded { required: false } => [C; 4],
        // Every client loses the setter, the property or the keyword.
        Kind::ParameterRemoved { .. } => [B, B, B, C],
        // The per-operation error enums (`order::errors`) gain or lose a variant; the reply
        // envelope's `code` schema does not change.
        Kind::ErrorCodeAdded | Kind::ErrorCodeRemoved => [B, C, C, C],
        // The JSON stays, the name that types and files are generated under goes.
        Kind::SchemaRemoved | Kind::SchemaRenamed => [B, B, B, B],
        // A new field of a generated struct breaks a Rust struct literal; nothing else.
        Kind::PropertyAdded {
            required: false, ..
        } => [B, C, C, C],
        Kind::PropertyAdded { required: true, .. } if request => [B, B, B, B],
        // A reply valid before lacks it: the schemas refuse it, Rust and Python fail to
        // decode it; TypeScript's reading code is unaffected.
        Kind::PropertyAdded { required: true, .. } => [B, C, B, B],
        Kind::PropertyRemoved { closed, .. } if request => [B, B, B, breaks(closed)],
        // The old name is refused where the object is closed, and a required new name is
        // missing from every request written before.
        Kind::PropertyRenamed {
            closed, required, ..
        } if request => [B, B, B, breaks(closed || required)],
        // Readers lose the field whatever its requiredness; a reply valid before still
        // validates (undeclared properties are allowed).
        Kind::PropertyRemoved { .. } => [B, B, B, C],
        // The removal's verdicts and the addition's together.
        Kind::PropertyRenamed { required, .. } => [B, B, B, breaks(required)],
        Kind::RequiredToOptional { rust_type, .. } if request => [breaks(rust_type), C, C, C],
        // Readers now get `undefined`/`Unset`/`None` where they had a value.
        Kind::RequiredToOptional { .. } => [B, B, B, C],
        Kind::OptionalToRequired { .. } if request => [B, B, B, B],
        // A reply valid before may lack it: refused by the schemas, fails to decode in Rust
        // and Python; TypeScript reads `T` where it read `T | undefined`.
        Kind::OptionalToRequired { .. } => [B, C, B, B],
        Kind::TypeChanged => [B; 4],
        // Rust's `i32` becomes `i64` (or back); TypeScript and Python have one number type.
        Kind::FormatWidened => [B, C, C, C],
        Kind::FormatNarrowed => [B, C, C, B],
        // Enum values are variants in Rust (an exhaustive `match` breaks either way); an
        // added value widens what readers must handle in TypeScript and Python (whose
        // literal enums refuse a value they do not list).
        Kind::EnumValueAdded if request => [B, C, C, C],
        Kind::EnumValueAdded => [B, B, B, C],
        Kind::EnumValueRemoved if request => [B, B, B, B],
        // A reply valid before may carry it: Python's literal enum refuses it.
        Kind::EnumValueRemoved => [B, C, B, B],
        Kind::EnumVariantRenamed => [B, C, C, C],
        // TypeScript and Python check no bound; Rust checks string rules in requests (reply
        // schemas lose theirs before typify sees them, `reply_constraints.rs`).
        Kind::Tightened { checked, rust_type } | Kind::Changed { checked, rust_type }
            if request =>
        {
            [breaks(checked || rust_type), C, C, B]
        }
        Kind::Tightened { .. } | Kind::Changed { .. } => [C, C, C, B],
        Kind::Loosened { rust_type } if request => [breaks(rust_type), C, C, C],
        Kind::Loosened { .. } => [C; 4],
        Kind::NullableAdded { rust_type } if request => [breaks(rust_type), C, C, C],
        // Readers may now get null.
        Kind::NullableAdded { .. } => [B, B, B, C],
        Kind::NullableRemoved { rust_type } if request => [breaks(rust_type), B, B, B],
        Kind::NullableRemoved { rust_type } => [breaks(rust_type), C, B, B],
        Kind::Other => [B; 4],
    }
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
    fn documentation_breaks_nobody_and_removal_breaks_every_client_of_it() {
        assert!(!verdicts(&Kind::Documentation, Dir::Both).any_breaking());
        let removed = verdicts(&Kind::OperationRemoved, Dir::Both);
        assert_eq!(removed.all(), [B, C, B, B, B, B, B, B]);
        // New clients do not call it; the old deployment still answers it.
        assert_eq!(removed.wire_new_clients, C);
        // Added: only a new client calls it, and the old deployment has no such route.
        let added = verdicts(&Kind::OperationAdded, Dir::Both);
        assert_eq!(added.all(), [C, B, C, C, C, C, C, C]);
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
        assert_eq!(verdicts(&open, Dir::Request).wire_old_clients, C);
        assert_eq!(verdicts(&closed, Dir::Request).wire_old_clients, B);
    }

    /// The cases where deployed clients break and a reader of the new documents does not:
    /// what oasdiff calls breaking in replies.
    #[test]
    fn a_reply_that_widens_breaks_old_clients_and_one_that_narrows_new_ones() {
        let removed = Kind::PropertyRemoved {
            required: true,
            closed: false,
        };
        assert_eq!(wire(&removed, Dir::Reply), [B, C]);
        let nullable = Kind::NullableAdded { rust_type: true };
        assert_eq!(wire(&nullable, Dir::Reply), [B, C]);
        assert_eq!(wire(&Kind::EnumValueAdded, Dir::Reply), [B, C]);
        let required = Kind::OptionalToRequired {
            rust_type: true,
            go_type: true,
        };
        assert_eq!(wire(&required, Dir::Reply), [C, B]);
        // The same changes to a request swap the directions.
        assert_eq!(wire(&Kind::EnumValueAdded, Dir::Request), [C, B]);
        assert_eq!(wire(&required, Dir::Request), [B, C]);
    }

    #[test]
    fn requiredness_is_in_go_types_and_not_in_java_ones() {
        let required = |go_type| Kind::OptionalToRequired {
            rust_type: true,
            go_type,
        };
        for dir in [Dir::Request, Dir::Reply] {
            let v = verdicts(&required(true), dir);
            assert_eq!((v.java, v.go), (C, B));
            // A nullable or untyped field is a pointer or `interface{}` either way.
            assert_eq!(verdicts(&required(false), dir).go, C);
        }
        // Java's positional parameters: an optional one added changes the signature.
        let added = verdicts(&Kind::ParameterAdded { required: false }, Dir::Request);
        assert_eq!((added.java, added.go), (B, C));
    }

    #[test]
    fn an_added_field_breaks_the_old_deployment_only_where_its_object_is_closed() {
        let added = |closed| Kind::PropertyAdded {
            required: false,
            closed,
        };
        assert_eq!(wire(&added(false), Dir::Request), [C, C]);
        assert_eq!(wire(&added(true), Dir::Request), [C, B]);
        let required = Kind::PropertyAdded {
            required: true,
            closed: false,
        };
        assert_eq!(wire(&required, Dir::Request), [B, C]);
    }
}
