//! The SDK's integration tests, one binary, by area. Operation facts (methods, paths,
//! idempotency, error codes, data types) come from the generated table,
//! `licensing_sdk::operations`, which is built from `spec/*.yaml`; reply and request
//! examples are read from the specs at test time.

mod common;

mod architecture;

mod errors;
mod first_day;
mod hostile;
mod paging;
mod schemas;
mod secrets;
mod surface;
mod tls;
mod token_cache;
mod tolerance;
mod transport;
mod validation;
mod wire_member;
mod wire_order;

use licensing_test_support::{pki, proxy};
