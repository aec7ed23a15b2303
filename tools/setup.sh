#!/usr/bin/env bash
# Installs every system dependency of rpt from Debian packages. Idempotent and non-interactive:
# packages already present are skipped, so a second run does nothing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  protobuf-compiler libprotobuf-dev libgrpc++-dev protobuf-compiler-grpc
  golang-google-grpc-dev  # gRPC health and reflection .proto files (CMake generates C++ from them)
  openssl                 # the TLS server tests make a throwaway certificate
  libsentencepiece-dev sentencepiece
  prometheus-cpp-dev libcivetweb-dev
  libspdlog-dev libfmt-dev
  libopenblas-dev libblis-serial-dev
  libcli11-dev nlohmann-json3-dev
  libmicrohttpd-dev       # the HTTP port: probes, /metrics and the JSON API
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev  # libFuzzer and sanitizers for -DRPT_BUILD_FUZZERS=ON (tests/fuzz/)
  python3 python3-numpy python3-yaml python3-grpcio python3-protobuf python3-torch
  prometheus curl
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} Debian packages already installed"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
