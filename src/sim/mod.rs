//! A stateful, in-memory simulator of both services.
