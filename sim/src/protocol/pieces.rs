//! Large replies built in pieces: each piece is freed once the connection has written it,
//! so a reply being sent holds only what is left of it (the server counts that against
//! its reply budget) rather than its whole size until the last byte is out.

use std::{collections::VecDeque, convert::Infallible, io, pin::Pin, task::Context};

use axum::body::{Body, Bytes};
use http_body::{Body as HttpBody, Frame, SizeHint};
use serde::Serialize;

/// The size of a piece: the most the server hands a connection at once, so it passes
/// pieces on as they are.
const PIECE: usize = 16 * 1024;

/// `value` as a JSON body: one buffer when it is small, pieces of [`PIECE`] bytes when not.
pub(crate) fn json_body(value: &impl Serialize) -> serde_json::Result<Body> {
    let mut writer = Writer::default();
    serde_json::to_writer(&mut writer, value)?;
    Ok(writer.into_body())
}

#[derive(Default)]
struct Writer {
    done: VecDeque<Bytes>,
    current: Vec<u8>,
    len: u64,
}

impl io::Write for Writer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            let n = (PIECE - self.current.len()).min(rest.len());
            self.current.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if self.current.len() == PIECE {
                let full = std::mem::replace(&mut self.current, Vec::with_capacity(PIECE));
                self.done.push_back(Bytes::from(full));
            }
        }
        self.len += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Writer {
    fn into_body(mut self) -> Body {
        if self.done.is_empty() {
            return Body::from(self.current);
        }
        if !self.current.is_empty() {
            self.done.push_back(Bytes::from(self.current));
        }
        Body::new(Pieces {
            pieces: self.done,
            left: self.len,
        })
    }
}

/// A body of pieces already built, with its exact size.
struct Pieces {
    pieces: VecDeque<Bytes>,
    left: u64,
}

impl HttpBody for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let piece = this.pieces.pop_front().map(|piece| {
            this.left -= piece.len() as u64;
            Ok(Frame::data(piece))
        });
        std::task::Poll::Ready(piece)
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_large_value_is_sent_in_pieces_of_the_same_bytes() {
        let value: Vec<String> = (0..5_000).map(|i| format!("entry {i}")).collect();
        let whole = serde_json::to_vec(&value).unwrap();
        assert!(whole.len() > 3 * PIECE);
        let mut body = json_body(&value).unwrap();
        assert_eq!(body.size_hint().exact(), Some(whole.len() as u64));
        let mut sent = Vec::new();
        let mut pieces = 0;
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let data = frame.unwrap().into_data().unwrap();
            assert!(data.len() <= PIECE);
            sent.extend_from_slice(&data);
            pieces += 1;
        }
        assert_eq!(sent, whole);
        assert_eq!(pieces, whole.len().div_ceil(PIECE));

        let small = json_body(&"small").unwrap();
        assert_eq!(small.size_hint().exact(), Some(7));
    }
}
