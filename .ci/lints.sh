#!/usr/bin/env bash
# The lints: clippy on every target and feature with warnings denied, the documentation
# with rustdoc's warnings denied, and the examples as `cargo run --example NAME` compiles
# them (the root package alone, its default features, which the test build never
# compiles). .ci/run runs it in its check lane, keyed (`cargo xtask ci-step lints`: only
# when a file of the repository or the toolchain changed since a run that passed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

timed() {
  local begin=$SECONDS
  echo "\$ $*"
  "$@"
  echo "($1 $2 took $((SECONDS - begin)) s)"
}
timed cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" timed cargo doc --workspace --no-deps --all-features --locked
timed cargo check --locked -q -p licensing-sdk --examples
