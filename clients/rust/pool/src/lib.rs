// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! A pool of tonic [`Channel`]s behind one tower [`Service`], so a generated
//! client spreads its RPCs over N HTTP/2 connections:
//!
//! ```ignore
//! let ep = Endpoint::from_static("http://127.0.0.1:50051").connect_timeout(Duration::from_secs(5));
//! let pool = rpclab_pool::Pool::connect(ep, 4, Policy::LeastLoaded).await?;
//! let mut client = BenchmarkServiceClient::new(pool.clone());
//! // ...
//! pool.close(Duration::from_secs(5)).await;
//! ```
//!
//! A tonic `Channel` is one connection served by one task, and h2 holds one
//! lock per connection (h2#531): past a few in-flight RPCs the connection is
//! the client's bottleneck. Each `Channel` that `Endpoint::connect` returns
//! has its own connection, so the pool holds N of them and picks one per RPC:
//! round robin, or least loaded (power of two choices: the next channel in
//! turn against another at random, the one with fewer RPCs in flight wins).
//! An RPC is in flight from its call until its response body ends or is
//! dropped (a stream: until it ends), counted by an atomic per channel, no
//! lock on the RPC path. A channel whose last RPC failed to reach the server
//! (a transport error: tonic exposes no connectivity state) is skipped while
//! another has not failed, and tried again once every channel has. Clones of
//! a pool share its channels and counters. tonic's `Channel::balance_list` is
//! no substitute: it keys endpoints by URI, so a repeated address gives one
//! connection (`balance_list_with_a_repeated_address_opens_one_connection` in
//! tests/pool.rs).

use std::fmt;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use opentelemetry::metrics::{Counter, Meter};
use opentelemetry::KeyValue;
use tokio::sync::{watch, Notify};
use tonic::body::Body;
use tonic::transport::{Channel, Endpoint};
use tonic::Status;
use tower::util::Oneshot;
use tower_service::Service;

/// The most channels a pool may have (as every rpclab pool library).
pub const MAX_SIZE: usize = 1024;

/// The size to use when none is given: the available CPUs, clamped to 2..8.
pub fn default_size() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8)
}

/// How a pool picks the channel of an RPC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    /// Each channel in turn.
    #[default]
    RoundRobin,
    /// Power of two choices: of the next channel in turn and another at
    /// random, the one with fewer RPCs in flight (ties to the one in turn).
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
    /// A pool has 1 to [`MAX_SIZE`] channels; holds the size asked for.
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
            Error::Size(n) => write!(f, "rpclab-pool: size {n}: want 1 to {MAX_SIZE} channels"),
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
    failed: Vec<AtomicBool>,
    next: AtomicUsize,
    policy: Policy,
    closed: AtomicBool,
    // Woken when an RPC ends while the pool is closed (close waits on it).
    drained: Notify,
    // Set to true when close gives up draining: the RPCs left end.
    cancel: watch::Sender<bool>,
    // rpclab.pool.picks, once instrumented, and each channel's attribute.
    picks: OnceLock<Counter<u64>>,
    attrs: Vec<[KeyValue; 1]>,
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

fn check_size(n: usize) -> Result<(), Error> {
    if n == 0 || n > MAX_SIZE {
        return Err(Error::Size(n));
    }
    Ok(())
}

impl Pool {
    /// A pool over channels the caller made (each with its own connection:
    /// one `Endpoint::connect` or `connect_lazy` per channel, not clones of one).
    pub fn new(channels: Vec<Channel>, policy: Policy) -> Result<Pool, Error> {
        check_size(channels.len())?;
        let inflight = channels.iter().map(|_| AtomicUsize::new(0)).collect();
        let failed = channels.iter().map(|_| AtomicBool::new(false)).collect();
        let (cancel, _) = watch::channel(false);
        let attrs = (0..channels.len()).map(|i| [KeyValue::new("rpclab.pool.channel", i as i64)]).collect();
        Ok(Pool {
            shared: Arc::new(Shared {
                channels,
                inflight,
                failed,
                next: AtomicUsize::new(0),
                policy,
                closed: AtomicBool::new(false),
                drained: Notify::new(),
                cancel,
                picks: OnceLock::new(),
                attrs,
            }),
        })
    }

    /// Connects n channels to ep, one connection each, together; Err on the
    /// first that fails (set `Endpoint::connect_timeout` so a target that
    /// never answers fails rather than hangs).
    pub async fn connect(ep: Endpoint, n: usize, policy: Policy) -> Result<Pool, Error> {
        check_size(n)?;
        let mut pending = tokio::task::JoinSet::new();
        for i in 0..n {
            let ep = ep.clone();
            pending.spawn(async move { (i, ep.connect().await) });
        }
        let mut channels: Vec<Option<Channel>> = (0..n).map(|_| None).collect();
        let mut first_err: Option<Error> = None;
        while let Some(r) = pending.join_next().await {
            match r {
                Ok((i, Ok(ch))) => channels[i] = Some(ch),
                Ok((i, Err(e))) => {
                    if first_err.as_ref().is_none_or(|f| matches!(f, Error::Connect(j, _) if i < *j)) {
                        first_err = Some(Error::Connect(i, e));
                    }
                }
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        Pool::new(channels.into_iter().map(Option::unwrap).collect(), policy)
    }

    /// n channels to ep that connect on their first RPC.
    pub fn connect_lazy(ep: Endpoint, n: usize, policy: Policy) -> Result<Pool, Error> {
        check_size(n)?;
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

    /// Closes the pool, for every clone: new RPCs fail at once with
    /// `Unavailable`; the RPCs in flight may finish for up to drain, then
    /// those left end with `Cancelled`. True if all finished within drain.
    /// Closing again waits for nothing more.
    pub async fn close(&self, drain: Duration) -> bool {
        let s = &*self.shared;
        s.closed.store(true, Ordering::SeqCst);
        let idle = || s.inflight.iter().all(|n| n.load(Ordering::SeqCst) == 0);
        let drained = tokio::time::timeout(drain, async {
            loop {
                let woken = s.drained.notified();
                if idle() {
                    return;
                }
                woken.await;
            }
        })
        .await
        .is_ok();
        if !drained {
            s.cancel.send_replace(true);
        }
        drained
    }

    /// Reports the pool's metrics through an OpenTelemetry meter (e.g.
    /// `opentelemetry::global::meter("rpclab-pool")`): `rpclab.pool.size`
    /// (gauge), `rpclab.pool.inflight` (gauge per channel) and
    /// `rpclab.pool.picks` (counter per channel), channels named by the
    /// attribute `rpclab.pool.channel`. Without it the pool reports nothing.
    /// Once per pool (later calls do nothing).
    pub fn instrument(&self, meter: &Meter) {
        let counter = meter
            .u64_counter("rpclab.pool.picks")
            .with_description("RPCs the pool sent, per channel")
            .with_unit("{call}")
            .build();
        if self.shared.picks.set(counter).is_err() {
            return;
        }
        let weak: Weak<Shared> = Arc::downgrade(&self.shared);
        meter
            .i64_observable_gauge("rpclab.pool.size")
            .with_description("Channels (connections) in the pool")
            .with_unit("{channel}")
            .with_callback(move |m| {
                if let Some(s) = weak.upgrade() {
                    m.observe(s.channels.len() as i64, &[]);
                }
            })
            .build();
        let weak: Weak<Shared> = Arc::downgrade(&self.shared);
        meter
            .i64_observable_gauge("rpclab.pool.inflight")
            .with_description("RPCs in flight, per channel")
            .with_unit("{call}")
            .with_callback(move |m| {
                if let Some(s) = weak.upgrade() {
                    for (n, a) in s.inflight.iter().zip(&s.attrs) {
                        m.observe(n.load(Ordering::Relaxed) as i64, a);
                    }
                }
            })
            .build();
    }

    /// Whether close was called (on this pool or a clone).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    /// The channel the next RPC goes to.
    fn pick(&self) -> usize {
        let s = &*self.shared;
        let n = s.channels.len();
        if n == 1 {
            return 0;
        }
        let start = s.next.fetch_add(1, Ordering::Relaxed) % n;
        let ok = |i: usize| !s.failed[i].load(Ordering::Relaxed);
        // The next channel in turn that has not failed (with every one failed, the next in turn).
        let Some(a) = (0..n).map(|k| (start + k) % n).find(|&i| ok(i)) else {
            return start;
        };
        if s.policy == Policy::RoundRobin {
            return a;
        }
        // Another at random among those that have not failed.
        let r = std::collections::hash_map::RandomState::new().hash_one(start) as usize;
        let others: Vec<usize> = (1..n).map(|k| (a + k) % n).filter(|&i| ok(i)).collect();
        if others.is_empty() {
            return a;
        }
        let b = others[r % others.len()];
        if s.inflight[b].load(Ordering::Relaxed) < s.inflight[a].load(Ordering::Relaxed) {
            b
        } else {
            a
        }
    }
}

/// Counts one RPC in flight on a channel until dropped.
struct InFlight {
    shared: Arc<Shared>,
    i: usize,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.shared.inflight[self.i].fetch_sub(1, Ordering::SeqCst) == 1 && self.shared.closed.load(Ordering::SeqCst)
        {
            self.shared.drained.notify_waiters();
        }
    }
}

type Cancelled = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Ready when close gives up draining.
fn cancelled(shared: &Shared) -> Cancelled {
    let mut rx = shared.cancel.subscribe();
    Box::pin(async move {
        let _ = rx.wait_for(|c| *c).await;
    })
}

/// A response body that keeps its RPC in flight until it ends or is
/// dropped, and ends with `Cancelled` when close gives up draining.
struct Counted {
    inner: Body,
    cancelled: Cancelled,
    guard: Option<InFlight>,
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if self.guard.is_some() && self.cancelled.as_mut().poll(cx).is_ready() {
            self.guard = None;
            return Poll::Ready(Some(Err(Status::cancelled("rpclab-pool: closed before the RPC ended"))));
        }
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = r {
            self.guard = None;
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The future of one RPC's response headers.
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<http::Response<Body>, tonic::transport::Error>> + Send>>;

/// A trailers-only response carrying status: how the pool ends an RPC
/// itself (`Unavailable` after close, `Cancelled` when close gives up), so
/// its error type stays the channel's and the caller sees a gRPC status.
fn refuse(status: Status) -> http::Response<Body> {
    status.into_http()
}

impl Service<http::Request<Body>> for Pool {
    type Response = http::Response<Body>;
    type Error = tonic::transport::Error;
    type Future = ResponseFuture;

    /// Always ready: readiness is the picked channel's, awaited in call.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    /// Sends req on the picked channel; the RPC counts as in flight on it
    /// until its response body ends, or the future or body is dropped.
    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if self.is_closed() {
            return Box::pin(async { Ok(refuse(Status::unavailable("rpclab-pool: the pool is closed"))) });
        }
        let i = self.pick();
        let shared = self.shared.clone();
        if let Some(c) = shared.picks.get() {
            c.add(1, &shared.attrs[i]);
        }
        shared.inflight[i].fetch_add(1, Ordering::SeqCst);
        let guard = InFlight { shared: shared.clone(), i };
        let call = Oneshot::new(shared.channels[i].clone(), req);
        let mut cancel = cancelled(&shared);
        Box::pin(async move {
            tokio::select! {
                r = call => match r {
                    Ok(resp) => {
                        shared.failed[i].store(false, Ordering::Relaxed);
                        let cancelled = cancelled(&shared);
                        Ok(resp.map(|inner| Body::new(Counted { inner, cancelled, guard: Some(guard) })))
                    }
                    Err(e) => {
                        shared.failed[i].store(true, Ordering::Relaxed);
                        Err(e)
                    }
                },
                _ = &mut cancel => Ok(refuse(Status::cancelled("rpclab-pool: closed before the RPC ended"))),
            }
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
