//! Running the other languages' tools (Node packages, a Python venv, their commands): the
//! clients' own runner, `licensing_clients::toolchain`, which xtask's jobs share.

pub use licensing_clients::toolchain::*;
