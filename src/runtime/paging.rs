//! Paged operations as one stream of items (the builders' `stream()`).

use std::{future::Future, pin::Pin};

use futures_util::{StreamExt as _, stream};

use crate::Error;

/// The page size a list's `stream()` asks for when none is set and the documents give no
/// maximum (`listMembers`'s `pageSize` has none): few requests, without asking for more
/// than a deployment is likely to allow. The command line's `--paginate` uses it too.
pub const DEFAULT_PAGE_SIZE: u32 = 100;

/// Every item of every page, fetching the next page only when the stream reaches it.
pub fn paginate<'a, B, T, F, Fut>(
    builder: B,
    first: Result<u32, Error>,
    fetch: F,
) -> Pin<Box<dyn futures_core::Stream<Item = Result<T, Error>> + Send + 'a>>
where
    B: Clone + Send + 'a,
    T: Send + 'a,
    F: Fn(B, u32) -> Fut + Send + 'a,
    Fut: Future<Output = Result<(Vec<T>, bool), Error>> + Send + 'a,
{
    let (first, invalid) = match first {
        Ok(page) => (Some(page), None),
        Err(e) => (None, Some(Err(e))),
    };
    let pages = stream::unfold(first, move |page| {
        let next = page.map(|page| (page, fetch(builder.clone(), page)));
        async move {
            let (page, fut) = next?;
            Some(match fut.await {
                // An empty page ends the stream even if the server claims more.
                Ok((items, more)) => {
                    let next = (more && !items.is_empty()).then(|| page.saturating_add(1));
                    (Ok(items), next)
                }
                Err(e) => (Err(e), None),
            })
        }
    })
    .flat_map(|page| match page {
        Ok(items) => stream::iter(items.into_iter().map(Ok)).left_stream(),
        Err(e) => stream::iter([Err(e)]).right_stream(),
    });
    stream::iter(invalid).chain(pages).boxed()
}
