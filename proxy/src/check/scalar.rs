//! A JSON scalar as the parser met it, shared by the two readers of bodies ([`super::fast`],
//! which only decides, and [`super::walk`], which finds), and the visitor methods that hand
//! each kind of scalar to their `scalar`.

use serde_json::Number;

use super::compiled::Ty;

/// A scalar as the parser met it.
pub(super) enum Scalar<'v> {
    Null,
    Bool(bool),
    Number(Number),
    Text(&'v str),
}

impl Scalar<'_> {
    /// Whether a scalar other than `null` is of the schema's type (`None`: any type).
    pub(super) fn fits(&self, ty: Option<Ty>) -> bool {
        match (ty, self) {
            (None | Some(Ty::Other), _) => true,
            (Some(Ty::String), Scalar::Text(_)) | (Some(Ty::Boolean), Scalar::Bool(_)) => true,
            (Some(Ty::Number), Scalar::Number(_)) => true,
            (Some(Ty::Integer), Scalar::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        }
    }
}

/// A `Visitor`'s `expecting` and its methods for every scalar but `f64`, for a visitor of
/// `Value = ()` whose `fn scalar(self, Scalar<'_>)` judges it. A float JSON cannot hold is
/// each reader's own: one decides the body is not clean, the other fails its parse.
macro_rules! visit_scalars {
    () => {
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_unit<E>(self) -> Result<(), E> {
            self.scalar($crate::check::scalar::Scalar::Null);
            Ok(())
        }

        fn visit_bool<E>(self, v: bool) -> Result<(), E> {
            self.scalar($crate::check::scalar::Scalar::Bool(v));
            Ok(())
        }

        fn visit_i64<E>(self, v: i64) -> Result<(), E> {
            self.scalar($crate::check::scalar::Scalar::Number(v.into()));
            Ok(())
        }

        fn visit_u64<E>(self, v: u64) -> Result<(), E> {
            self.scalar($crate::check::scalar::Scalar::Number(v.into()));
            Ok(())
        }

        fn visit_str<E>(self, v: &str) -> Result<(), E> {
            self.scalar($crate::check::scalar::Scalar::Text(v));
            Ok(())
        }
    };
}
pub(crate) use visit_scalars;
