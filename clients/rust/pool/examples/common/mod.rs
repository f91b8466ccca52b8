// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! What the examples share: one unary call of
//! grpc.testing.BenchmarkService/UnaryCall (an empty SimpleRequest, a
//! message declared here, so no protoc), and a tonic code's name as gRPC
//! spells it. Each example uses part of it.

#![allow(dead_code)]

use rpclab_pool::Pool;
use tonic::codegen::http::uri::PathAndQuery;

/// An empty message: a SimpleRequest or SimpleResponse with no field read.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Empty {}

/// One UnaryCall through pool.
pub async fn unary_call(pool: &Pool) -> Result<(), tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(pool.clone());
    grpc.ready().await.map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let codec = tonic_prost::ProstCodec::<Empty, Empty>::default();
    let path = PathAndQuery::from_static("/grpc.testing.BenchmarkService/UnaryCall");
    grpc.unary(tonic::Request::new(Empty {}), path, codec).await.map(|_| ())
}

/// "DEADLINE_EXCEEDED" for `Code::DeadlineExceeded`.
pub fn code_name(code: tonic::Code) -> String {
    let mut out = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
