//! A request's query read as the checks need it: its pairs, borrowed from the request
//! where nothing in them was encoded.

use std::borrow::Cow;

use axum::http::request::Parts;

/// The query's pairs, decoded (borrowed where nothing was encoded).
pub(super) fn pairs(parts: &Parts) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
    parts.uri.query().map(parse).unwrap_or_default()
}

/// A query's pairs as `form_urlencoded` reads them. Without a `%` or `+` nothing is
/// encoded: split as it splits (empty pieces skipped, a key without `=` given an empty
/// value) and borrowed, in one pass and without its decoding of every piece.
fn parse(query: &str) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
    let mut pairs = Vec::new();
    // A piece, split at its first `=`; an empty one is skipped.
    let mut piece = |start: usize, eq: Option<usize>, end: usize| {
        if end > start {
            let (key, value) = match eq {
                Some(eq) => (&query[start..eq], &query[eq + 1..end]),
                None => (&query[start..end], ""),
            };
            pairs.push((Cow::Borrowed(key), Cow::Borrowed(value)));
        }
    };
    // Where the current piece starts, and its first `=`.
    let (mut start, mut eq) = (0, None);
    for (at, byte) in query.bytes().enumerate() {
        match byte {
            b'%' | b'+' => return form_urlencoded::parse(query.as_bytes()).collect(),
            b'=' => eq = eq.or(Some(at)),
            b'&' => {
                piece(start, eq, at);
                (start, eq) = (at + 1, None);
            }
            _ => {}
        }
    }
    piece(start, eq, query.len());
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path reads a query as `form_urlencoded` does; one with anything to decode
    /// is left to it.
    #[test]
    fn query_pairs_as_form_urlencoded() {
        let queries = [
            "",
            "a",
            "a=",
            "=",
            "=1",
            "&&a=1&",
            "a=1&b=2",
            "a=1=2&b",
            "a=1&a=2&&&b=",
            "channelCode=CH01&channelCustomerId=CC-42&defaultCustomer=N&g_nonce=7",
            "a=%20b",
            "a=b+c",
            "%61=1&b",
            "a=%zz&b=%",
            "a+b=c%2Bd",
            "n=%E4%B8%AD&m=%FF",
            "é=ü&x",
        ];
        let same = |query: &str| {
            let expected: Vec<(Cow<'_, str>, Cow<'_, str>)> =
                form_urlencoded::parse(query.as_bytes()).collect();
            assert_eq!(parse(query), expected, "{query:?}");
        };
        queries.into_iter().for_each(same);
        // And every query of up to five of `a`, `=`, `&`, `%`, `+`.
        let mut queries = vec![String::new()];
        for _ in 0..5 {
            queries = queries
                .iter()
                .flat_map(|q| ['a', '=', '&', '%', '+'].map(|c| format!("{q}{c}")))
                .collect();
            queries.iter().map(String::as_str).for_each(same);
        }
    }
}
