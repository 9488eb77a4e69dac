#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

// Before the generated clients: rustdoc lists inherent impls in the order it meets them,
// so each client's page opens with `builder` and `from_env` (config.rs), then the
// operations.
mod config;

/// The order service: enterprise accounts, batch license orders, locks, virtual assets and
/// asset-number allocation. Generated from `spec/order.yaml`.
#[allow(missing_docs, clippy::all)]
pub mod order {
    include!(concat!(env!("OUT_DIR"), "/order.rs"));
}

/// The member center: employees, asset assignment and lending. Generated from
/// `spec/member.yaml`.
#[allow(missing_docs, clippy::all)]
pub mod member {
    include!(concat!(env!("OUT_DIR"), "/member.rs"));
}

/// Enums of both services, generated from the specs, each tolerant of values the platform
/// adds later (`Unknown`, or `Other` for [`ErrorCode`]).
mod enums {
    include!(concat!(env!("OUT_DIR"), "/enums.rs"));
}

pub mod auth;
pub mod env;
mod error;
pub mod operations;
mod orders;
pub use orders::AssetEntry;
pub mod retry;
pub mod runtime;
pub mod transport;
pub mod validate;

/// The guides beside the README, `docs/*.md` in the repository: the SDK at length, the
/// command line, the sandbox, the conformance proxy, other languages and changing the
/// spec. Their Rust blocks are doctests of this crate.
// `build.rs` sets `licensing_guides` when `docs/` is there: a copy of the crate without it
// (the spec-diff corpus, `spec-diff/corpus/`, copies `src/`, `build.rs` and the README)
// still builds.
#[cfg(licensing_guides)]
pub mod guides {
    macro_rules! guide {
        ($name:ident, $file:literal) => {
            pub mod $name {
                #![doc = include_str!(concat!("../docs/", $file))]
                // The guides name the crate's items as the README does (`[`Error`]`).
                #[allow(unused_imports)]
                use crate::*;
            }
        };
    }
    guide!(sdk, "sdk.md");
    guide!(cli, "cli.md");
    guide!(sandbox, "sandbox.md");
    guide!(proxy, "proxy.md");
    guide!(other_languages, "other-languages.md");
    guide!(changing_the_spec, "changing-the-spec.md");
}

pub use auth::{CachedToken, StaticToken, TokenProvider};
pub use config::{
    ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_REPLY_BYTES, DEFAULT_TIMEOUT,
    MemberService, OrderService,
};
pub use enums::*;
pub use error::{
    ApiError, ConfigError, DecodeFailure, Error, OTHER_CODE, SHOWN_TEXT_BYTES, ValidationError,
};
pub use retry::{Backoff, MAX_RETRY_AFTER, RetryPolicy};
pub use runtime::{CallOptions, DEFAULT_PAGE_SIZE, MAX_OPAQUE_VALUES, ReplyCode};
pub use transport::TransportKind;

/// For the code `build.rs` generates (and the benchmark that times its steps): the runtime
/// items it calls that users never name. Not public API: no stability promise; any of it
/// may change or go in any release.
#[doc(hidden)]
pub mod __generated {
    pub use crate::runtime::{
        body::PreparedBody,
        call::{call, configure, configured_parts},
        decode::{TaggedRest, null_as_empty, read_tag},
        opaque::{Budget, OpaqueField, opaque},
        paging::paginate,
        reply::Raw,
        setters::{initialized, supplied},
    };
}
