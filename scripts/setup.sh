#!/usr/bin/env bash
# Installs the Debian packages the full test suite needs, only those missing.
# Go modules, Maven, Cargo, npm and pip dependencies are fetched by each
# build from the package registries.
set -euo pipefail
pkgs=(
  protobuf-compiler                                   # Go code generation check
  libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc zlib1g-dev cmake g++ make libcli11-dev nlohmann-json3-dev libgtest-dev  # C++ client, server and their GoogleTest tests
  clang-format                                        # C++: scripts/vet.sh's format check
  chromium fonts-liberation                           # the report's browser test (fonts: readable screenshot)
  python3-venv                                        # Python client
  iproute2                                            # ip netns and veth: the several-hosts test
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for t in go cargo mvn java node npm python3; do
  command -v "$t" >/dev/null || echo "setup: warning: $t not found; the $t part of the suite will fail" >&2
done
