// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! Generates YDB's DebugService (client and server) from ../../../proto for
//! the pool's tests (tests/pool.rs), which run a real tonic server on
//! loopback; the library itself uses no generated code.

use std::error::Error;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new("../../../proto");
    let proto = root.join("ydb/debug/v1/debug.proto");
    tonic_build::configure().compile_protos(&[&proto], &[root]).map_err(|e| {
        format!("build.rs: compile {}: {e} (is protoc installed? apt-get install protobuf-compiler)", proto.display())
    })?;
    println!("cargo:rerun-if-changed={}", proto.display());
    Ok(())
}
