// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! A pool of tonic [`Channel`]s behind one tower [`Service`], so a generated
//! client spreads its RPCs over N HTTP/2 connections:
//!
//! ```ignore
//! let ep = Endpoint::from_static("http://127.0.0.1:50051").connect_timeout(Duration::from_secs(5));
//! let pool = rpclab_pool::Pool::connect(ep, 4, Policy::LeastLoaded).await?;
//! let mut client = BenchmarkServiceClient::new(pool);
//! ```
//!
//! A tonic `Channel` is one connection served by one task, and h2 holds one
//! lock per connection (h2#531): past a few in-flight RPCs the connection is
//! the client's bottleneck. Each `Channel` that `Endpoint::connect` returns
//! has its own connection, so the pool holds N of them and picks one per RPC:
//! round robin, or least loaded (the fewest RPCs in flight, counted by an
//! atomic per channel, no lock on the RPC path). Clones of a pool share its
//! channels and counters. tonic's `Channel::balance_list` is no substitute:
//! it keys endpoints by URI, so a repeated address gives one connection
//! (`balance_list_with_a_repeated_address_opens_one_connection` in
//! tests/pool.rs).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::transport::{Channel, Endpoint};
use tower::util::Oneshot;
use tower_service::Service;

/// How a pool picks the channel of an RPC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    /// Each channel in turn.
    #[default]
    RoundRobin,
    /// The channel with the fewest RPCs in flight (the first such after the
    /// round-robin cursor, so ties spread).
    LeastLoaded,
}

impl Policy {
    /// The policy's name, as `FromStr` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Policy::RoundRobin => "round-robin",
            Policy::LeastLoaded => "least-loaded",
        }
    }
}

impl FromStr for Policy {
    type Err = Error;

    /// "round-robin" or "least-loaded".
    fn from_str(s: &str) -> Result<Policy, Error> {
        match s {
            "round-robin" => Ok(Policy::RoundRobin),
            "least-loaded" => Ok(Policy::LeastLoaded),
            _ => Err(Error::Policy(s.to_string())),
        }
    }
}

/// Why a pool could not be made.
#[derive(Debug)]
pub enum Error {
    /// A pool needs at least one channel; holds the size asked for.
    Size(usize),
    /// An unknown policy name.
    Policy(String),
    /// A channel did not connect (the endpoint's `connect_timeout` bounds
    /// the wait); holds the channel's index and tonic's error.
    Connect(usize, tonic::transport::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Size(n) => write!(f, "rpclab-pool: size {n}: a pool needs at least 1 channel"),
            Error::Policy(p) => write!(f, "rpclab-pool: unknown policy {p:?} (want round-robin or least-loaded)"),
            Error::Connect(i, e) => write!(f, "rpclab-pool: channel {i}: connect: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Connect(_, e) => Some(e),
            _ => None,
        }
    }
}

/// N channels and their in-flight counts, shared by a pool's clones.
struct Shared {
    channels: Vec<Channel>,
    inflight: Vec<AtomicUsize>,
    next: AtomicUsize,
    policy: Policy,
}

/// A pool of tonic channels; a tower `Service` (so tonic's `GrpcService`)
/// that sends each request on one of them. Cheap to clone.
#[derive(Clone)]
pub struct Pool {
    shared: Arc<Shared>,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool").field("size", &self.len()).field("policy", &self.shared.policy).finish()
    }
}

impl Pool {
    /// A pool over channels the caller made (each with its own connection:
    /// one `Endpoint::connect` or `connect_lazy` per channel, not clones of one).
    pub fn new(channels: Vec<Channel>, policy: Policy) -> Result<Pool, Error> {
        if channels.is_empty() {
            return Err(Error::Size(0));
        }
        let inflight = channels.iter().map(|_| AtomicUsize::new(0)).collect();
        Ok(Pool { shared: Arc::new(Shared { channels, inflight, next: AtomicUsize::new(0), policy }) })
    }

    /// Connects n channels to ep, one connection each, in turn; Err on the
    /// first that fails (set `Endpoint::connect_timeout` so a target that
    /// never answers fails rather than hangs).
    pub async fn connect(ep: Endpoint, n: usize, policy: Policy) -> Result<Pool, Error> {
        if n == 0 {
            return Err(Error::Size(n));
        }
        let mut channels = Vec::with_capacity(n);
        for i in 0..n {
            channels.push(ep.connect().await.map_err(|e| Error::Connect(i, e))?);
        }
        Pool::new(channels, policy)
    }

    /// n channels to ep that connect on their first RPC.
    pub fn connect_lazy(ep: Endpoint, n: usize, policy: Policy) -> Result<Pool, Error> {
        if n == 0 {
            return Err(Error::Size(n));
        }
        Pool::new((0..n).map(|_| ep.connect_lazy()).collect(), policy)
    }

    /// The number of channels.
    pub fn len(&self) -> usize {
        self.shared.channels.len()
    }

    /// Always false: a pool has at least one channel.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The RPCs in flight on each channel (a snapshot).
    pub fn inflight(&self) -> Vec<usize> {
        self.shared.inflight.iter().map(|n| n.load(Ordering::Relaxed)).collect()
    }

    /// The channel the next RPC goes to.
    fn pick(&self) -> usize {
        let s = &*self.shared;
        let n = s.channels.len();
        if n == 1 {
            return 0;
        }
        let start = s.next.fetch_add(1, Ordering::Relaxed) % n;
        if s.policy == Policy::RoundRobin {
            return start;
        }
        let mut best = start;
        let mut least = usize::MAX;
        for k in 0..n {
            let i = (start + k) % n;
            let load = s.inflight[i].load(Ordering::Relaxed);
            if load < least {
                (best, least) = (i, load);
                if load == 0 {
                    break;
                }
            }
        }
        best
    }
}

/// Counts one RPC in flight on a channel until dropped.
struct InFlight {
    shared: Arc<Shared>,
    i: usize,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.shared.inflight[self.i].fetch_sub(1, Ordering::Relaxed);
    }
}

/// The future of one RPC's response headers.
pub type ResponseFuture<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

impl<B> Service<http::Request<B>> for Pool
where
    Channel: Service<http::Request<B>>,
    <Channel as Service<http::Request<B>>>::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = <Channel as Service<http::Request<B>>>::Response;
    type Error = <Channel as Service<http::Request<B>>>::Error;
    type Future = ResponseFuture<Self::Response, Self::Error>;

    /// Always ready: readiness is the picked channel's, awaited in call.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    /// Sends req on the picked channel; the RPC counts as in flight on it
    /// until its response headers arrive or the future is dropped.
    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let i = self.pick();
        self.shared.inflight[i].fetch_add(1, Ordering::Relaxed);
        let guard = InFlight { shared: self.shared.clone(), i };
        let call = Oneshot::new(self.shared.channels[i].clone(), req);
        Box::pin(async move {
            let _guard = guard;
            call.await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_from_str() {
        let cases = [
            ("round-robin", Some(Policy::RoundRobin)),
            ("least-loaded", Some(Policy::LeastLoaded)),
            ("", None),
            ("random", None),
            ("Least-Loaded", None),
        ];
        for (s, want) in cases {
            match (s.parse::<Policy>(), want) {
                (Ok(got), Some(want)) => assert_eq!(got, want, "{s:?}: got {got:?}, want {want:?}"),
                (Err(e), None) => {
                    let msg = e.to_string();
                    assert!(msg.contains(&format!("{s:?}")), "{s:?}: got {msg:?}, want the bad value named");
                }
                (got, want) => panic!("{s:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
