//! `cargo xtask clients [--test]`: the TypeScript and Python clients, generated and tested
//! by `licensing-clients` (`clients/driver/`, see `clients/README.md`); this alias only
//! calls it. The simulator process it starts serves xtask's console checks too.

pub use licensing_clients::{Options, Simulator, build_simulator, prebuilt, run as run_all};
