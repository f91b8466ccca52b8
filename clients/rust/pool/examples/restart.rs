// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! A server killed and restarted under load: 4 tasks of unary RPCs through
//! a pool of 3 (least-loaded) to argv[1]. Prints "running" after 200 RPCs,
//! then waits for a line on stdin (the server has been killed and started
//! again on the same port), runs until 200 more RPCs succeed and the kernel
//! has the pool's 3 connections again (or 30 s pass), and prints one JSON
//! line: the RPCs that succeeded, the failures by code, whether it
//! recovered, and the connections to the server as the kernel has them.
//! clients/conformance (TestRustPoolRestart) drives it against
//! `rpclab serve`, as clients/python/pool/tests/restart.py.
//!
//!     cargo run --release -p rpclab-pool --example restart -- 127.0.0.1:PORT

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rpclab_pool::{Policy, Pool};
use tokio::sync::Notify;
use tonic::transport::Endpoint;

mod common;
#[path = "../tests/kernel/mod.rs"]
mod kernel;

#[derive(Default)]
struct State {
    ok: usize,
    failed: BTreeMap<String, usize>,
    stop: bool,
}

/// Waits (at most limit) until cond holds of the state, woken by each RPC.
async fn wait_for(state: &Mutex<State>, woken: &Notify, limit: Duration, cond: impl Fn(&State) -> bool) -> bool {
    tokio::time::timeout(limit, async {
        loop {
            let n = woken.notified();
            if cond(&state.lock().unwrap()) {
                return;
            }
            n.await;
        }
    })
    .await
    .is_ok()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = std::env::args().nth(1).ok_or("usage: restart 127.0.0.1:PORT")?;
    let port: u16 = target.rsplit(':').next().unwrap_or("").parse()?;
    let ep = Endpoint::from_shared(format!("http://{target}"))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10));
    let pool = Pool::connect(ep, 3, Policy::LeastLoaded).await?;
    let state = Arc::new(Mutex::new(State::default()));
    let woken = Arc::new(Notify::new());
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (pool, state, woken) = (pool.clone(), state.clone(), woken.clone());
            tokio::spawn(async move {
                while !state.lock().unwrap().stop {
                    let r = common::unary_call(&pool).await;
                    let mut s = state.lock().unwrap();
                    match r {
                        Ok(()) => s.ok += 1,
                        Err(e) => *s.failed.entry(common::code_name(e.code())).or_default() += 1,
                    }
                    drop(s);
                    woken.notify_waiters();
                }
            })
        })
        .collect();
    wait_for(&state, &woken, Duration::from_secs(60), |s| s.ok >= 200).await;
    println!("running");
    tokio::task::spawn_blocking(|| std::io::stdin().lock().read_line(&mut String::new())).await??;
    let before = state.lock().unwrap().ok;
    let recovered = wait_for(&state, &woken, Duration::from_secs(60), |s| s.ok >= before + 200).await;
    // The pool connected again: its 3 connections as the kernel has them
    // (a channel skipped while failing is redialled, then connects).
    let deadline = Instant::now() + Duration::from_secs(30);
    while kernel::connections_to(port) < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let conns = kernel::connections_to(port);
    state.lock().unwrap().stop = true;
    for c in callers {
        c.await?;
    }
    pool.close(Duration::from_secs(5)).await;
    let s = state.lock().unwrap();
    let failed: Vec<String> = s.failed.iter().map(|(k, v)| format!(r#""{k}": {v}"#)).collect();
    println!(r#"{{"ok": {}, "failed": {{{}}}, "recovered": {recovered}, "conns": {conns}}}"#, s.ok, failed.join(", "));
    Ok(())
}
