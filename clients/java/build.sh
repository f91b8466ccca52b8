#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Builds rpclab's Java client (docs/clients.md) when its sources, its pom or
# the protos changed since the last build; quiet and quick when up to date.
# Needs a JDK (17+) and Maven; dependencies come from Maven Central into
# ~/.m2/repository (set RPCLAB_MVN_FLAGS=-o to build offline from that cache).
# The unit tests (src/test, `mvn test`) run from clients/conformance TestJavaUnit, the pool's
# (pool/src/test) from TestJavaPoolUnit.
set -euo pipefail
cd "$(dirname "$0")"
stamp=target/.rpclab-built
if [[ -f $stamp && -f target/classpath.txt ]] &&
  [[ -z $(find pom.xml src/main pool/pom.xml pool/src/main ../../proto/grpc/testing ../../docs/step.schema.json -newer "$stamp" -print -quit) ]]; then
  exit 0
fi
command -v mvn >/dev/null || { echo "clients/java/build.sh: mvn not found (apt-get install maven openjdk-17-jdk-headless)" >&2; exit 1; }
echo "clients/java: building (mvn)" >&2
# (Maven 3.8 prints colour resets even in batch mode: strip them.)
# The pool library (pool/, io.rpclab:rpclab-pool) goes into ~/.m2 first: the client depends on it.
# shellcheck disable=SC2086
mvn -q -B -Dstyle.color=never ${RPCLAB_MVN_FLAGS:-} -f pool/pom.xml -Dmaven.test.skip=true install 2>&1 | sed 's/\x1b\[0m//g' >&2
# shellcheck disable=SC2086
mvn -q -B -Dstyle.color=never ${RPCLAB_MVN_FLAGS:-} compile 2>&1 | sed 's/\x1b\[0m//g' >&2
touch "$stamp"
