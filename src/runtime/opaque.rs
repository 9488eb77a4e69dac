//! Fields whose shape the documents do not show, read as JSON values within one budget per
//! reply ([`MAX_OPAQUE_VALUES`]), so a reply cannot take many times its size in memory.

use std::{fmt, sync::atomic::Ordering};

use super::hooks::ATTEMPT;

/// The most JSON values one reply may hold, all its fields together, where the documents
/// do not show the shape (`assetLimits`, `boundUserInfo`, a `data` documented as always
/// null, …). Those fields are read as [`serde_json::Value`], which takes 32 bytes or more
/// per value however short its JSON (`1,` is two bytes): without a bound, a reply within
/// [`crate::DEFAULT_MAX_REPLY_BYTES`] could take many times its size in memory. Past the
/// bound the call fails with [`crate::Error::Decode`] naming the field. At most about
/// 64 MiB of values (a `Value` and its share of the arrays and maps holding it).
pub const MAX_OPAQUE_VALUES: usize = 1 << 20;

/// Reads a field whose shape the documents do not show, counting its values against the
/// reply's [`MAX_OPAQUE_VALUES`] (against the field's own, outside a call). The generated
/// types read every such field through it (`codegen::wire::opaque_fields`).
pub fn opaque<'de, D, T>(deserializer: D, field: &'static str) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: OpaqueField,
{
    let left = ATTEMPT
        .try_with(|a| a.opaque_left.load(Ordering::Relaxed))
        .unwrap_or(MAX_OPAQUE_VALUES);
    let mut budget = Budget { left, field };
    let value = T::read(deserializer, &mut budget);
    let _ = ATTEMPT.try_with(|a| a.opaque_left.store(budget.left, Ordering::Relaxed));
    value
}

/// The values an opaque field may still hold.
pub struct Budget {
    left: usize,
    field: &'static str,
}

impl Budget {
    fn take<E: serde::de::Error>(&mut self) -> Result<(), E> {
        match self.left.checked_sub(1) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(E::custom(format_args!(
                "`{}`: more than {MAX_OPAQUE_VALUES} values in the reply's fields whose shape \
                 the documents do not show (the SDK's bound, `MAX_OPAQUE_VALUES`)",
                self.field
            ))),
        }
    }
}

/// The shapes an opaque field takes in the generated types.
pub trait OpaqueField: Sized {
    /// Reads the field, counting its values.
    fn read<'de, D: serde::Deserializer<'de>>(d: D, budget: &mut Budget) -> Result<Self, D::Error>;
}

impl OpaqueField for serde_json::Value {
    fn read<'de, D: serde::Deserializer<'de>>(d: D, budget: &mut Budget) -> Result<Self, D::Error> {
        serde::de::DeserializeSeed::deserialize(Counted(budget), d)
    }
}

impl OpaqueField for Option<serde_json::Value> {
    fn read<'de, D: serde::Deserializer<'de>>(d: D, budget: &mut Budget) -> Result<Self, D::Error> {
        match serde_json::Value::read(d, budget)? {
            serde_json::Value::Null => Ok(None),
            value => Ok(Some(value)),
        }
    }
}

impl OpaqueField for Option<Vec<serde_json::Value>> {
    fn read<'de, D: serde::Deserializer<'de>>(d: D, budget: &mut Budget) -> Result<Self, D::Error> {
        struct List<'b>(&'b mut Budget);
        impl<'de> serde::de::Visitor<'de> for List<'_> {
            type Value = Option<Vec<serde_json::Value>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array or null")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Self::Value, D::Error> {
                d.deserialize_seq(self)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element_seed(Counted(&mut *self.0))? {
                    items.push(item);
                }
                Ok(Some(items))
            }
        }
        d.deserialize_option(List(budget))
    }
}

/// An absent or `null` list is empty, as for the other optional lists.
impl OpaqueField for Vec<serde_json::Value> {
    fn read<'de, D: serde::Deserializer<'de>>(d: D, budget: &mut Budget) -> Result<Self, D::Error> {
        Ok(Option::<Vec<serde_json::Value>>::read(d, budget)?.unwrap_or_default())
    }
}

/// One JSON value, each value in it (map keys included) counted against the budget.
struct Counted<'b>(&'b mut Budget);

impl<'de> serde::de::DeserializeSeed<'de> for Counted<'_> {
    type Value = serde_json::Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.take::<D::Error>()?;
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Counted<'_> {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(b.into())
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(n.into())
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(n.into())
    }
    fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
        Ok(n.into())
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(s.into())
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(s.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Counted(&mut *self.0))? {
            items.push(item);
        }
        Ok(items.into())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.take::<A::Error>()?;
            let value = map.next_value_seed(Counted(&mut *self.0))?;
            object.insert(key, value);
        }
        Ok(object.into())
    }
}
