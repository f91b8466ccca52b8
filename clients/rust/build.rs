// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! Generates the BenchmarkService client from ../../proto (protoc must be on
//! PATH, or named by $PROTOC), and passes the tonic and rustc versions to the
//! record's env.

use std::error::Error;
use std::path::Path;
use std::process::Command;

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new("../../proto");
    let protos = [root.join("grpc/testing/benchmark_service.proto"), root.join("grpc/testing/messages.proto")];
    tonic_prost_build::configure()
        .build_server(false)
        .bytes(".")
        .compile_protos(&protos, &[root.to_path_buf()])
        .map_err(|e| {
            format!(
                "build.rs: compile {}: {e} (is protoc installed? apt-get install protobuf-compiler)",
                root.display()
            )
        })?;
    for p in &protos {
        println!("cargo:rerun-if-changed={}", p.display());
    }

    // The tonic version the lock file resolved, for env.grpc_version.
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let tonic = lock
        .split("[[package]]")
        .find(|p| p.contains("\nname = \"tonic\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map_or("unknown", |v| v.trim_matches('"'));
    println!("cargo:rustc-env=RPCLAB_TONIC_VERSION={tonic}");
    println!("cargo:rerun-if-changed=Cargo.lock");

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let v = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    println!("cargo:rustc-env=RPCLAB_RUSTC_VERSION={}", v.trim());
    Ok(())
}
