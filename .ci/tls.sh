#!/usr/bin/env bash
# The TLS matrix of licensing-sdk, each configuration built and tested with exactly the TLS
# stack it names:
#
#   none         --no-default-features            no TLS at all: https:// refused at build()
#   rustls       (default features)               reqwest's rustls, no native-tls
#   native-tls   --no-default-features -F native-tls   OpenSSL, no rustls
#
# First the check that keeps the matrix honest: cargo unifies the features of a test build's
# dev-dependencies into the package, so a dev-dependency that turns on reqwest's `rustls`
# would put rustls in the build "without TLS" and in the "OpenSSL only" one. For each
# configuration `cargo tree -e features,normal,dev -i reqwest` must show the features it
# names and no other; then its tests run. Needs OpenSSL's development files (libssl-dev,
# pkg-config) for native-tls.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail() {
  echo "tls.sh: $*" >&2
  exit 1
}

# CONFIG, cargo's feature arguments, the reqwest TLS features that must be on.
check() {
  local name=$1 want=$2
  shift 2
  local tree
  tree=$(cargo tree --locked -p licensing-sdk "$@" -e features,normal,dev -i reqwest --prefix none)
  local on=()
  for feature in rustls native-tls; do
    if grep -q "^reqwest feature \"$feature\"" <<<"$tree"; then on+=("$feature"); fi
  done
  local got="${on[*]:-}"
  [ "$got" = "$want" ] ||
    fail "$name: the test build turns on reqwest's TLS features [${got}], not [${want}]: $(grep -A3 '^reqwest feature "\(rustls\|native-tls\)"' <<<"$tree" | head -n 12)"
  echo "tls.sh: $name: reqwest's TLS features in the test build: [${got}]"
}
check none "" --no-default-features
check rustls "rustls"
check native-tls "native-tls" --no-default-features --features native-tls

# Each configuration's tests: the library's, the transport and TLS tests, and the
# environment scenarios (child processes that read LICENSING_* and SSL_CERT_FILE).
cargo test --locked -p licensing-sdk --no-default-features --lib
cargo test --locked -p licensing-sdk --no-default-features --features native-tls --lib --test sdk -- tls:: transport::
cargo test --locked -p licensing-sdk --no-default-features --features native-tls --test environment
echo "tls.sh: the three configurations passed (rustls, the default, with the workspace's tests)"
