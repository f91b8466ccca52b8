#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Builds rpclab's Java client (docs/clients.md) and the pool library it uses
# (pool/), one Maven reactor (parent/pom.xml), when their sources, their poms
# or the protos changed since the last build; quiet and quick when up to date.
# Needs a JDK (17+) and Maven; dependencies come from Maven Central into
# ~/.m2/repository (set RPCLAB_MVN_FLAGS=-o to build offline from that cache).
# The unit tests (src/test, `mvn test`) run from clients/conformance TestJavaUnit, the pool's
# (pool/src/test) from TestJavaPoolUnit.
set -euo pipefail
cd "$(dirname "$0")"
stamp=target/.rpclab-built
if [[ -f $stamp && -f target/classpath.txt ]] &&
  [[ -z $(find pom.xml parent/pom.xml src/main pool/pom.xml pool/src/main ../../proto/grpc/testing ../../schema/step.schema.json -newer "$stamp" -print -quit) ]]; then
  exit 0
fi
command -v mvn >/dev/null || { echo "clients/java/build.sh: mvn not found (apt-get install maven openjdk-17-jdk-headless)" >&2; exit 1; }
echo "clients/java: building (mvn)" >&2
# (Maven 3.8 prints colour resets even in batch mode: strip them.)
# The reactor compiles the pool library (pool/, io.rpclab:rpclab-pool) first; the client's
# class path (target/classpath.txt) names the pool's pool/target/classes.
# shellcheck disable=SC2086
mvn -q -B -Dstyle.color=never ${RPCLAB_MVN_FLAGS:-} -f parent/pom.xml -Dmaven.test.skip=true compile 2>&1 | sed 's/\x1b\[0m//g' >&2
touch "$stamp"
