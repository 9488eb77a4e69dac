//! Reading what serde's derives read slowly or refuse: internally tagged unions without
//! buffering each object, and optional lists sent as `null`. The generated `Deserialize`
//! impls call these (`codegen::tagged`, `codegen::wire`).

/// Reads an internally tagged object (`{"orderType": "new_buy", ...}`) without buffering
/// it: the entries before the tag (none, when the tag comes first, as this crate and the
/// simulator write it) are kept as JSON values, and the variant reads them and then the
/// rest of the object straight from the input. serde's derived tagged enums buffer every
/// object whole first, which made reading a large batch about twice as slow. The generated
/// `Deserialize` of each discriminated union (`codegen::tagged`) calls this.
pub fn read_tag<'de, A>(mut map: A, tag: &'static str) -> Result<(String, TaggedRest<A>), A::Error>
where
    A: serde::de::MapAccess<'de>,
{
    let mut before = Vec::new();
    loop {
        match map.next_key::<String>()? {
            None => return Err(serde::de::Error::missing_field(tag)),
            Some(key) if key == tag => {
                let value = map.next_value::<String>()?;
                let rest = TaggedRest {
                    before: before.into_iter(),
                    pending: None,
                    map,
                };
                return Ok((value, rest));
            }
            Some(key) => before.push((key, map.next_value::<serde_json::Value>()?)),
        }
    }
}

/// The entries of a tagged object other than its tag, for the variant's `Deserialize`.
pub struct TaggedRest<A> {
    before: std::vec::IntoIter<(String, serde_json::Value)>,
    pending: Option<serde_json::Value>,
    map: A,
}

impl<'de, A> serde::de::MapAccess<'de> for TaggedRest<A>
where
    A: serde::de::MapAccess<'de>,
{
    type Error = A::Error;

    fn next_key_seed<K>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error>
    where
        K: serde::de::DeserializeSeed<'de>,
    {
        use serde::de::IntoDeserializer as _;
        match self.before.next() {
            Some((key, value)) => {
                self.pending = Some(value);
                seed.deserialize(key.into_deserializer()).map(Some)
            }
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V>(&mut self, seed: V) -> Result<V::Value, A::Error>
    where
        V: serde::de::DeserializeSeed<'de>,
    {
        match self.pending.take() {
            Some(value) => seed
                .deserialize(value)
                .map_err(<A::Error as serde::de::Error>::custom),
            None => self.map.next_value_seed(seed),
        }
    }
}

/// Reads an optional list, taking JSON `null` as absent (empty). The generated types use
/// it on every optional list (`codegen::wire`).
pub fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    use serde::Deserialize as _;
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}
