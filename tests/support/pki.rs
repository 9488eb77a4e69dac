//! The test helpers' certificates, for `proxy/tests/proxy/main.rs`, which still includes
//! this file by path: the helpers are the `licensing-test-support` package's now. Removed
//! once that test names the package itself.

pub use licensing_test_support::pki::Pki;
