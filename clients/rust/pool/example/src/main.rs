// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! pool-example TARGET [CALLS]: a pool of 4 connections to TARGET (e.g.
//! `rpclab serve`'s address) that sends CALLS unary calls of
//! grpc.testing.BenchmarkService/UnaryCall (an empty SimpleRequest, a
//! message declared here, so this example needs no protoc) and prints
//! "ok N" when all succeeded.

use std::time::Duration;

use rpclab_pool::{Policy, Pool};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Endpoint;

/// An empty message: a SimpleRequest or SimpleResponse with no field read.
#[derive(Clone, PartialEq, prost::Message)]
struct Empty {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let target = args.get(1).ok_or("usage: pool-example TARGET [CALLS]")?;
    let calls: usize = args.get(2).map_or(Ok(100), |s| s.parse())?;
    let ep = Endpoint::from_shared(format!("http://{target}"))?.connect_timeout(Duration::from_secs(5));
    let pool = Pool::connect(ep, 4, Policy::LeastLoaded).await?;
    let mut grpc = tonic::client::Grpc::new(pool.clone());
    let path = PathAndQuery::from_static("/grpc.testing.BenchmarkService/UnaryCall");
    for _ in 0..calls {
        grpc.ready().await?;
        let codec = tonic_prost::ProstCodec::<Empty, Empty>::default();
        grpc.unary(tonic::Request::new(Empty {}), path.clone(), codec).await?;
    }
    pool.close(Duration::from_secs(5)).await;
    println!("ok {calls}");
    Ok(())
}
