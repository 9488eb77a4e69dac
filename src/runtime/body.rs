//! A request body converted, checked and serialized once per call, kept in chunks that grow
//! with it, and sent whole by every attempt.

use std::sync::Arc;

/// A request body converted, checked and serialized once per call, so that a call's
/// attempts send the same bytes (cheap to clone) instead of each cloning and serializing
/// the whole body again. `Debug` shows only its size: bodies carry passwords.
///
/// The bytes are kept in chunks that grow with the body (one chunk for most bodies), never
/// in one buffer grown by doubling: a body of 65 MiB would otherwise hold 128 MiB while it
/// is sent. What is held stays within about an eighth of the body's length.
#[derive(Clone)]
pub struct PreparedBody(Chunks, u64);

/// A prepared body's bytes: most bodies are one chunk, kept without a list around it
/// (two allocations fewer per call).
#[derive(Clone)]
enum Chunks {
    One(bytes::Bytes),
    Many(Arc<[bytes::Bytes]>),
}

impl PreparedBody {
    /// The body's rules beyond the types' (`crate::validate`), then its JSON. Errors are
    /// the builder messages `ValidationError::from_builder_message` reads.
    pub fn new<T>(body: Result<T, String>) -> Result<Self, String>
    where
        T: serde::Serialize + crate::validate::Validate,
    {
        let body = body?;
        body.validate().map_err(|e| e.to_string())?;
        let mut out = Chunked::default();
        serde_json::to_writer(&mut out, &body).map_err(|e| format!("body: {e}"))?;
        let length = out.length();
        Ok(Self(out.finish(), length))
    }

    /// The chunks the bytes are kept in.
    #[cfg(test)]
    fn chunks(&self) -> &[bytes::Bytes] {
        match &self.0 {
            Chunks::One(one) => std::slice::from_ref(one),
            Chunks::Many(many) => many,
        }
    }

    /// The body's length in bytes.
    pub fn len(&self) -> u64 {
        self.1
    }

    /// Whether the body is empty (never, for JSON).
    pub fn is_empty(&self) -> bool {
        self.1 == 0
    }

    /// The bytes, for one attempt's request: with their exact length, so they are sent
    /// with `Content-Length`, never chunked.
    pub fn body(&self) -> reqwest::Body {
        match &self.0 {
            Chunks::One(one) => reqwest::Body::from(one.clone()),
            Chunks::Many(chunks) => reqwest::Body::wrap(ChunkBody {
                chunks: chunks.clone(),
                next: 0,
                left: self.1,
            }),
        }
    }
}

impl std::fmt::Debug for PreparedBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedBody({} bytes)", self.1)
    }
}

/// An `io::Write` that fills chunks of growing size: up to 8 KiB at first, then an
/// eighth of what is already written (at least 4 KiB, at most 1 MiB), so the unused room is at most about
/// an eighth of the length, and no byte past the first chunk is ever copied twice.
#[derive(Default)]
struct Chunked {
    done: Vec<bytes::Bytes>,
    current: Vec<u8>,
    written: usize,
}

impl Chunked {
    const FIRST: usize = 8 << 10;
    const SMALLEST: usize = 4 << 10;
    const LARGEST: usize = 1 << 20;
    fn length(&self) -> u64 {
        (self.written + self.current.len()) as u64
    }

    fn seal(&mut self) {
        self.written += self.current.len();
        let next = (self.written / 8).clamp(Self::SMALLEST, Self::LARGEST);
        let full = std::mem::replace(&mut self.current, Vec::with_capacity(next));
        self.done.push(full.into());
    }

    fn finish(mut self) -> Chunks {
        if self.done.is_empty() {
            return Chunks::One(self.current.into());
        }
        if !self.current.is_empty() {
            self.written += self.current.len();
            self.done.push(std::mem::take(&mut self.current).into());
        }
        match <[bytes::Bytes; 1]>::try_from(self.done) {
            Ok([one]) => Chunks::One(one),
            Err(many) => Chunks::Many(many.into()),
        }
    }
}

impl Chunked {
    /// Past the current chunk's room: the first chunk grows as a `Vec` would, to
    /// [`Chunked::FIRST`] (small bodies, most of them, cost what `serde_json::to_vec`
    /// costs: no large allocation, which the allocator serves slowly); then new chunks.
    #[cold]
    fn spill(&mut self, mut buf: &[u8]) {
        while !buf.is_empty() {
            let room = self.current.capacity() - self.current.len();
            if room == 0 {
                if self.done.is_empty() && self.current.capacity() < Self::FIRST {
                    let grown = (self.current.capacity() * 2).clamp(128, Self::FIRST);
                    self.current.reserve_exact(grown - self.current.len());
                } else {
                    self.seal();
                }
                continue;
            }
            let (now, later) = buf.split_at(room.min(buf.len()));
            self.current.extend_from_slice(now);
            buf = later;
        }
    }
}

impl std::io::Write for Chunked {
    // serde_json writes a few bytes at a time: the common case is one bounds check and a
    // copy, as for a `Vec`.
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if buf.len() <= self.current.capacity() - self.current.len() {
            self.current.extend_from_slice(buf);
        } else {
            self.spill(buf);
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A prepared body of several chunks, as an HTTP body of known length.
struct ChunkBody {
    chunks: Arc<[bytes::Bytes]>,
    next: usize,
    left: u64,
}

impl http_body::Body for ChunkBody {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let chunk = self.chunks.get(self.next).cloned();
        self.next += 1;
        if let Some(c) = &chunk {
            self.left -= c.len() as u64;
        }
        std::task::Poll::Ready(chunk.map(|c| Ok(http_body::Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod prepared_body {
    use super::*;
    use http_body_util::BodyExt as _;

    #[derive(serde::Serialize)]
    struct Big(Vec<String>);
    impl crate::validate::Validate for Big {
        fn validate(&self) -> Result<(), crate::ValidationError> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_large_body_is_sent_whole_from_chunks_with_little_room_to_spare() {
        let value = Big((0..200_000).map(|i| format!("order-{i:08}")).collect());
        let expected = serde_json::to_vec(&value).unwrap();
        let body = PreparedBody::new(Ok(value)).unwrap();
        assert_eq!(body.len(), expected.len() as u64);
        let chunks = body.chunks();
        assert!(chunks.len() > 1, "a 3 MB body is kept in chunks");
        let held: usize = chunks.iter().map(|c| c.len()).sum();
        assert_eq!(held, expected.len());
        // No chunk but the last may be short of the size it was given.
        let room: usize = chunks[..chunks.len() - 1]
            .iter()
            .map(|c| c.len())
            .max()
            .unwrap();
        assert!(room <= 1 << 20);
        let sent = body.body();
        assert_eq!(
            http_body::Body::size_hint(&sent).exact(),
            Some(expected.len() as u64),
            "a known length: sent with Content-Length"
        );
        let bytes = sent.collect().await.unwrap().to_bytes();
        assert_eq!(bytes, expected);
        // A second attempt sends the same bytes.
        assert_eq!(body.body().collect().await.unwrap().to_bytes(), expected);
    }

    #[tokio::test]
    async fn a_small_body_is_one_buffer() {
        let body = PreparedBody::new(Ok(Big(vec!["a\"b".into()]))).unwrap();
        assert_eq!(body.chunks().len(), 1);
        assert_eq!(
            body.body().collect().await.unwrap().to_bytes(),
            &br#"["a\"b"]"#[..]
        );
        assert!(format!("{body:?}").contains("8 bytes"));
    }
}
