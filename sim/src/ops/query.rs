//! A request's query string, decoded once.

/// Appends `raw` decoded as one name or value of `application/x-www-form-urlencoded`: `+`
/// is a space, `%XX` a byte, and bytes that are not UTF-8 become U+FFFD.
fn push_decoded(out: &mut String, raw: &str) {
    if !raw.bytes().any(|b| matches!(b, b'%' | b'+')) {
        out.push_str(raw);
        return;
    }
    let spaced: Vec<u8> = raw
        .bytes()
        .map(|b| if b == b'+' { b' ' } else { b })
        .collect();
    out.push_str(&percent_encoding::percent_decode(&spaced).decode_utf8_lossy());
}

/// A query string's parameters, in order, decoded as `application/x-www-form-urlencoded`
/// (undecodable bytes become U+FFFD, as in axum's `Query`). Read on every request, so
/// the decoded names and values share one buffer: two allocations, whatever their number.
#[derive(Debug, Default)]
pub(crate) struct Query {
    text: String,
    /// Where each name and value is in `text`: (name's start, name's end, value's start,
    /// value's end).
    pairs: Vec<(usize, usize, usize, usize)>,
}

impl Query {
    /// The parameters of a request's query string (`None`: the URI has none).
    pub fn parse(query: Option<&str>) -> Self {
        let Some(query) = query.filter(|q| !q.is_empty()) else {
            return Self::default();
        };
        let bytes = query.as_bytes();
        if memchr::memchr2(b'%', b'+', bytes).is_none() {
            return Self::parse_plain(query);
        }
        // Decoding never lengthens a parameter (`%XX` becomes at most U+FFFD's 3 bytes).
        let mut parsed = Self {
            text: String::with_capacity(query.len()),
            pairs: Vec::with_capacity(4),
        };
        // As `form_urlencoded::parse` splits: on `&`, skipping empty pieces, then at the
        // first `=`. One pass over the bytes; most names and values need no decoding and
        // are copied as they are.
        let (mut start, mut eq, mut plain) = (0, None, true);
        for i in 0..=bytes.len() {
            match bytes.get(i) {
                None | Some(b'&') => {
                    if i > start {
                        let at = eq.unwrap_or(i);
                        let value = if at < i { at + 1 } else { i };
                        parsed.push_raw(&query[start..at], &query[value..i], plain);
                    }
                    (start, eq, plain) = (i + 1, None, true);
                }
                Some(b'=') if eq.is_none() => eq = Some(i),
                Some(b'%' | b'+') => plain = false,
                Some(_) => {}
            }
        }
        parsed
    }

    /// A query with nothing to decode (nearly every one): kept as it is, its pieces found
    /// at memory speed. Walking it byte by byte cost 2,300 instructions on a read's four
    /// parameters (callgrind).
    fn parse_plain(query: &str) -> Self {
        let bytes = query.as_bytes();
        let mut pairs = Vec::with_capacity(4);
        let mut start = 0;
        for end in memchr::memchr_iter(b'&', bytes).chain([bytes.len()]) {
            if end > start {
                let name_end =
                    memchr::memchr(b'=', &bytes[start..end]).map_or(end, |at| start + at);
                pairs.push((start, name_end, (name_end + 1).min(end), end));
            }
            start = end + 1;
        }
        Self {
            text: query.to_owned(),
            pairs,
        }
    }

    /// Appends one parameter as it appears in a query string (`plain`: nothing in it
    /// needs decoding).
    fn push_raw(&mut self, name: &str, value: &str, plain: bool) {
        if plain {
            return self.push(name, value);
        }
        let start = self.text.len();
        push_decoded(&mut self.text, name);
        let name_end = self.text.len();
        push_decoded(&mut self.text, value);
        self.pairs
            .push((start, name_end, name_end, self.text.len()));
    }

    /// Parameters given as they are (already decoded).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut query = Self::default();
        for (name, value) in pairs {
            query.push(name, value);
        }
        query
    }

    /// Appends one parameter as it is.
    fn push(&mut self, name: &str, value: &str) {
        let start = self.text.len();
        self.text.push_str(name);
        let name_end = self.text.len();
        self.text.push_str(value);
        self.pairs
            .push((start, name_end, name_end, self.text.len()));
    }

    /// The parameters, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs
            .iter()
            .map(|&(start, name, value, end)| (&self.text[start..name], &self.text[value..end]))
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs().find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_reads_as_form_urlencoded_does() {
        for raw in [
            "",
            "a=1",
            "a=1&&b=%41+c&=x&y&z=%FF&%2B=%26&k=v=w&+=+&a=2",
            "g_nonce=abc-1&appKey=%E4%BD%A0%E5%A5%BD&bad=%E4%BD&pct=%&pct2=%4",
            "&&&",
            "x=%zz&y=a%20b%2",
            "k=v=w&y&=x&&z=&g_nonce=abc",
            "&a&",
            "=",
            "==&b=",
        ] {
            let expected: Vec<(String, String)> = form_urlencoded::parse(raw.as_bytes())
                .into_owned()
                .collect();
            let query = Query::parse(Some(raw));
            let got: Vec<(String, String)> = query
                .pairs()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            assert_eq!(got, expected, "{raw:?}");
            let first = expected.first().map(|(k, _)| k.as_str()).unwrap_or("none");
            assert_eq!(
                query.get(first),
                expected
                    .iter()
                    .find(|(k, _)| k == first)
                    .map(|(_, v)| v.as_str()),
                "{raw:?}"
            );
        }
        assert_eq!(Query::parse(None).pairs().count(), 0);
    }
}
