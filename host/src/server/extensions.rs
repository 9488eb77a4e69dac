//! What the server and the handlers it serves tell each other through a request's or a
//! reply's extensions: typed values, set once per request and read by a lookup, so that
//! no handler's signature carries them.

use std::net::SocketAddr;

use axum::body::Bytes;
use tokio::time::Instant;

/// The largest request body the server reads: 256 MiB (or the body budget, if smaller).
/// The platform's documents show no payload bound; a 10,000-order batch is about 40 MB.
pub const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// A request's body in memory, or why it could not be read (too slow, over the body
/// budget, larger than [`MAX_BODY_BYTES`], cut short).
pub type ReadBody = Result<Bytes, String>;

/// In a request's extensions: the server did not read its body (the body budget was
/// taken, or the body was too slow), and it is given as empty. The simulator answers such
/// a request with code `500`, which the SDK retries; the text says why.
#[derive(Clone, Debug)]
pub struct BodyUnread(pub String);

/// In a reply's extensions: the reply must not be sent. The server closes its connection
/// instead, with no answer, as a crashed or cut-off server would (the simulator's
/// `dropConnection` fault), so that no task has to unwind for it.
#[derive(Clone, Copy, Debug)]
pub struct DropConnection;

/// In a request's extensions: the address it came from, as the server saw it.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub SocketAddr);

/// In a reply's extensions: when it may leave. The server waits until then before it
/// sends the reply (the admin checks answer a wrong token no sooner than its address's
/// turn).
#[derive(Clone, Copy, Debug)]
pub struct NotBefore(pub Instant);
