// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! Growth at the server's stream limit, against a real server: 16 RPCs in
//! flight (16 tasks of unary calls) through a pool of size 1, with growth on
//! (max_connections 8, streams_per_connection 4) and off. For each, the
//! connections to the server as the kernel has them (this process's
//! sockets, /proc/self/fd and /proc/net/tcp) while the 16 run, and the RPCs
//! per second over a fixed interval. Prints one JSON line, as
//! clients/python/pool/tests/streamlimit.py; clients/conformance
//! (TestRustPoolStreamLimit) runs it against
//! `rpclab serve --max-concurrent-streams 4 --delay 2ms`.
//!
//!     cargo run --release -p rpclab-pool --example streamlimit -- 127.0.0.1:PORT [seconds]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpclab_pool::Pool;
use tokio::sync::Notify;
use tonic::transport::Endpoint;

mod common;
#[path = "../tests/kernel/mod.rs"]
mod kernel;

const INFLIGHT: usize = 16;

/// What one run saw.
struct Seen {
    conns: usize,
    channels: usize,
    rps: f64,
    resizes: u64,
}

impl Seen {
    fn json(&self) -> String {
        let Seen { conns, channels, rps, resizes } = self;
        format!(r#"{{"conns": {conns}, "channels": {channels}, "rps": {}, "resizes": {resizes}}}"#, rps.round() as u64)
    }
}

async fn run(target: &str, seconds: f64, growth: bool) -> Result<Seen, Box<dyn std::error::Error>> {
    let port: u16 = target.rsplit(':').next().unwrap_or("").parse()?;
    let ep = Endpoint::from_shared(format!("http://{target}"))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(30));
    let mut b = Pool::builder(ep).size(1);
    if growth {
        b = b.max_connections(8).streams_per_connection(4);
    }
    let pool = b.connect().await?;
    // One call first: h2 sends a new connection's first streams before the
    // server's SETTINGS arrive, so 16 at once on it would pass the server's
    // limit of 4 and 12 come back refused (REFUSED_STREAM, Unavailable).
    common::unary_call(&pool).await?;
    let done = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let counted = Arc::new(Notify::new());
    let workers: Vec<_> = (0..INFLIGHT)
        .map(|_| {
            let (pool, done, stop, counted) = (pool.clone(), done.clone(), stop.clone(), counted.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    common::unary_call(&pool).await?;
                    if done.fetch_add(1, Ordering::Relaxed) + 1 == 400 {
                        counted.notify_one();
                    }
                }
                Ok::<(), tonic::Status>(())
            })
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(60), counted.notified())
        .await
        .map_err(|_| "400 RPCs: not done in 60 s")?;
    let conns = kernel::connections_to(port);
    let (n0, t0) = (done.load(Ordering::Relaxed), Instant::now());
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await; // the measured interval, not a synchronisation
    let rps = (done.load(Ordering::Relaxed) - n0) as f64 / t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await??;
    }
    let channels = pool.len();
    let resizes = pool.resizes();
    pool.close(Duration::from_secs(5)).await;
    Ok(Seen { conns, channels, rps, resizes })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let target = args.get(1).ok_or("usage: streamlimit 127.0.0.1:PORT [seconds]")?;
    let seconds: f64 = args.get(2).map_or(Ok(2.0), |s| s.parse())?;
    let on = run(target, seconds, true).await?;
    let off = run(target, seconds, false).await?;
    let ratio = on.rps.round() / off.rps.round().max(1.0);
    println!(r#"{{"on": {}, "off": {}, "ratio": {ratio:.2}}}"#, on.json(), off.json());
    Ok(())
}
