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
//! round robin, or least loaded (power of two choices: two different
//! channels drawn at random, the one with fewer RPCs in flight wins).
//! An RPC is in flight from its call until its response body ends or is
//! dropped (a stream: until it ends), counted by an atomic per channel, no
//! lock on the RPC path.
//!
//! tonic exposes no connectivity state (a `Channel`'s `poll_ready` is its
//! request buffer's, ready whether or not the connection is up), so a
//! channel counts as failing from an RPC on it that ends in a transport
//! error (its connection refused, reset or timed out) until an RPC on it
//! gets a response. A failing channel is skipped while another is not, and
//! one failing for the redial delay is replaced by a new channel to the same
//! endpoint ([`Builder::redial_delay`]). With [`Builder::max_connections`]
//! and [`Builder::streams_per_connection`] the pool grows a channel when an
//! RPC finds every channel at the stream limit, and retires a grown channel
//! idle for [`Builder::idle_timeout`]. Clones of a pool share its channels
//! and counters. tonic's `Channel::balance_list` is no substitute: it keys
//! endpoints by URI, so a repeated address gives one connection
//! (`balance_list_with_a_repeated_address_opens_one_connection` in
//! tests/pool.rs).

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use opentelemetry::metrics::{Counter, Meter};
use opentelemetry::{KeyValue, StringValue, Value};
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tonic::body::Body;
use tonic::transport::{Channel, Endpoint};
use tonic::Status;
use tower::util::Oneshot;
use tower_service::Service;

/// The most channels a pool may have, and the most `max_connections` may
/// be (as every rpclab pool library).
pub const MAX_SIZE: usize = 1024;

/// How long a channel added by growth may carry no RPC before it is retired.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a channel may keep failing before it is replaced.
pub const DEFAULT_REDIAL_DELAY: Duration = Duration::from_secs(5);

/// The redial delay doubles while the target stays down, up to this.
pub const MAX_REDIAL_DELAY: Duration = Duration::from_secs(120);

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
    /// Power of two choices: of two different channels drawn at random,
    /// the one with fewer RPCs in flight (ties to the first drawn).
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
#[non_exhaustive]
pub enum Error {
    /// A pool has 1 to [`MAX_SIZE`] channels; holds the size asked for.
    Size(usize),
    /// An unknown policy name.
    Policy(String),
    /// A channel did not connect (the endpoint's `connect_timeout` bounds
    /// the wait); holds the channel's index and tonic's error.
    Connect(usize, tonic::transport::Error),
    /// `max_connections` below the size or above [`MAX_SIZE`]; holds it and
    /// the size.
    MaxConnections(usize, usize),
    /// `max_connections` above the size without `streams_per_connection`
    /// (tonic does not expose the server's SETTINGS_MAX_CONCURRENT_STREAMS,
    /// so the limit is configured); holds `max_connections`.
    NoStreamLimit(usize),
    /// `streams_per_connection` of 0.
    StreamsPerConnection(usize),
    /// An idle timeout of zero.
    IdleTimeout(Duration),
    /// A redial delay of zero.
    RedialDelay(Duration),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Size(n) => write!(f, "rpclab-pool: size {n}: want 1 to {MAX_SIZE} channels"),
            Error::Policy(p) => write!(f, "rpclab-pool: unknown policy {p:?} (want round-robin or least-loaded)"),
            Error::Connect(i, e) => write!(f, "rpclab-pool: channel {i}: connect: {e}"),
            Error::MaxConnections(m, n) => {
                write!(f, "rpclab-pool: max_connections {m}: want the size ({n}) to {MAX_SIZE}")
            }
            Error::NoStreamLimit(m) => write!(
                f,
                "rpclab-pool: max_connections {m} needs streams_per_connection (tonic does not expose \
                 the server's SETTINGS_MAX_CONCURRENT_STREAMS)"
            ),
            Error::StreamsPerConnection(n) => write!(f, "rpclab-pool: streams_per_connection {n}: want at least 1"),
            Error::IdleTimeout(d) => write!(f, "rpclab-pool: idle_timeout {d:?}: want more than zero"),
            Error::RedialDelay(d) => write!(f, "rpclab-pool: redial_delay {d:?}: want more than zero"),
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

fn check_size(n: usize) -> Result<(), Error> {
    if n == 0 || n > MAX_SIZE {
        return Err(Error::Size(n));
    }
    Ok(())
}

/// Options of a pool to one endpoint: `Pool::builder(ep).size(1)
/// .max_connections(8).streams_per_connection(4).connect().await`.
#[derive(Clone, Debug)]
pub struct Builder {
    ep: Endpoint,
    size: usize,
    policy: Policy,
    max_connections: Option<usize>,
    streams_per_connection: Option<usize>,
    idle_timeout: Duration,
    redial_delay: Duration,
}

impl Builder {
    /// The channels the pool starts with and never goes below (default
    /// [`default_size`]; 1 to [`MAX_SIZE`]).
    pub fn size(mut self, n: usize) -> Builder {
        self.size = n;
        self
    }

    /// How RPCs are spread (default round robin).
    pub fn policy(mut self, p: Policy) -> Builder {
        self.policy = p;
        self
    }

    /// Growth at the stream limit: the most channels the pool may grow to
    /// (the size to [`MAX_SIZE`]; default the size, i.e. no growth). Above
    /// the size it needs `streams_per_connection`.
    pub fn max_connections(mut self, n: usize) -> Builder {
        self.max_connections = Some(n);
        self
    }

    /// The RPCs one connection carries at once, the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS: configured, as tonic does not
    /// expose the peer's SETTINGS. When every channel carries this many
    /// the pool grows (up to `max_connections`).
    pub fn streams_per_connection(mut self, n: usize) -> Builder {
        self.streams_per_connection = Some(n);
        self
    }

    /// How long a grown channel may carry no RPC before it is retired
    /// (default [`DEFAULT_IDLE_TIMEOUT`], 30 s; more than zero).
    pub fn idle_timeout(mut self, d: Duration) -> Builder {
        self.idle_timeout = d;
        self
    }

    /// How long a channel may keep failing before it is replaced (default
    /// [`DEFAULT_REDIAL_DELAY`], 5 s, doubling while the target stays down
    /// up to [`MAX_REDIAL_DELAY`]; more than zero).
    pub fn redial_delay(mut self, d: Duration) -> Builder {
        self.redial_delay = d;
        self
    }

    fn check(&self) -> Result<Option<Growth>, Error> {
        check_size(self.size)?;
        if let Some(n @ 0) = self.streams_per_connection {
            return Err(Error::StreamsPerConnection(n));
        }
        if self.idle_timeout.is_zero() {
            return Err(Error::IdleTimeout(self.idle_timeout));
        }
        if self.redial_delay.is_zero() {
            return Err(Error::RedialDelay(self.redial_delay));
        }
        let max = self.max_connections.unwrap_or(self.size);
        if max < self.size || max > MAX_SIZE {
            return Err(Error::MaxConnections(max, self.size));
        }
        if max == self.size {
            return Ok(None);
        }
        let limit = self.streams_per_connection.ok_or(Error::NoStreamLimit(max))?;
        Ok(Some(Growth { max, limit, idle: self.idle_timeout }))
    }

    /// Connects the pool's channels, one connection each, together; Err on
    /// the first that fails (set `Endpoint::connect_timeout` so a target that
    /// never answers fails rather than hangs). Options are checked first.
    pub async fn connect(self) -> Result<Pool, Error> {
        let growth = self.check()?;
        let n = self.size;
        let mut pending = tokio::task::JoinSet::new();
        for i in 0..n {
            let ep = self.ep.clone();
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
        let channels = channels.into_iter().map(Option::unwrap).collect();
        Ok(Pool::make(channels, self.policy, Some((self.ep, self.redial_delay)), growth))
    }

    /// The pool, its channels connecting on their first RPC. Must be called
    /// within a tokio runtime (as `Endpoint::connect_lazy`).
    pub fn connect_lazy(self) -> Result<Pool, Error> {
        let growth = self.check()?;
        let channels = (0..self.size).map(|_| self.ep.connect_lazy()).collect();
        Ok(Pool::make(channels, self.policy, Some((self.ep, self.redial_delay)), growth))
    }
}

/// Growth at the stream limit, when on.
#[derive(Clone, Copy, Debug)]
struct Growth {
    max: usize,
    limit: usize,
    idle: Duration,
}

/// One channel and its counts. A redial replaces the whole slot (the RPCs
/// still on the old channel keep counting on the old slot).
struct Slot {
    channel: Channel,
    grown: bool,
    inflight: AtomicUsize,
    // Milliseconds since the pool's epoch, plus one, of the first of the
    // transport errors in a row on this channel; 0 while not failing.
    failing_since: AtomicU64,
    // The current redial delay, in milliseconds.
    delay: AtomicU64,
    // Milliseconds since the pool's epoch at which a grown channel last
    // started or ended an RPC.
    active: AtomicU64,
    index: usize,
    // rpclab.pool.target and rpclab.pool.connection.
    attrs: [KeyValue; 2],
}

impl Slot {
    fn new(channel: Channel, target: &KeyValue, index: usize, grown: bool, delay: u64, now: u64) -> Arc<Slot> {
        Arc::new(Slot {
            channel,
            grown,
            inflight: AtomicUsize::new(0),
            failing_since: AtomicU64::new(0),
            delay: AtomicU64::new(delay),
            active: AtomicU64::new(now),
            index,
            attrs: [target.clone(), KeyValue::new("rpclab.pool.connection", index as i64)],
        })
    }

    fn failing(&self) -> bool {
        self.failing_since.load(Ordering::Relaxed) != 0
    }

    fn load(&self) -> usize {
        self.inflight.load(Ordering::Relaxed)
    }
}

type Table = Vec<Arc<Slot>>;

struct Instruments {
    picks: Counter<u64>,
    resizes: Counter<u64>,
    redials: Counter<u64>,
}

/// The channels and their counts, shared by a pool's clones.
struct Shared {
    // Swapped whole (under `resize`) when a channel is added, retired or
    // redialled; read without a lock per RPC.
    table: ArcSwap<Table>,
    // Serialises growth, retirement and redial.
    resize: Mutex<()>,
    // Channels retired or replaced, for close to wait on their RPCs.
    gone: Mutex<Vec<Weak<Slot>>>,
    // How to make a channel (None for a pool over given channels) and the
    // default redial delay, in milliseconds.
    ep: Option<Endpoint>,
    redial_ms: u64,
    growth: Option<Growth>,
    // The attribute rpclab.pool.target: the endpoint's URI ("" for a pool
    // over given channels).
    target: KeyValue,
    epoch: Instant,
    next: AtomicUsize,
    policy: Policy,
    closed: AtomicBool,
    // Woken when an RPC ends while the pool is closed (close waits on it).
    drained: Notify,
    // Set to true when close gives up draining: the RPCs left end.
    cancel: watch::Sender<bool>,
    // Wakes the task that retires and redials channels.
    tend: Arc<Notify>,
    // The task that retires and redials channels, awaited by close.
    task: Mutex<Option<JoinHandle<()>>>,
    resizes: AtomicU64,
    redials: AtomicU64,
    metrics: OnceLock<Instruments>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.tend.notify_one();
    }
}

impl Shared {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Of the channels `ok` takes, the one the policy points to; channels
    /// failing are skipped while another is not. None if ok takes none.
    /// Round robin: the candidates in turn. Least loaded: two different
    /// candidates drawn at random, the one with fewer RPCs in flight (the
    /// first drawn on a tie).
    fn choose(&self, t: &Table, ok: impl Fn(&Slot) -> bool) -> Option<usize> {
        let healthy = |s: &Slot| ok(s) && !s.failing();
        let mut m = t.iter().filter(|s| healthy(s)).count();
        let strict = m > 0;
        if !strict {
            m = t.iter().filter(|s| ok(s)).count();
        }
        if m == 0 {
            return None;
        }
        let cand = |s: &Slot| if strict { healthy(s) } else { ok(s) };
        // The k-th candidate; counts may change meanwhile (None then).
        let nth = |k: usize| {
            if m == t.len() {
                return Some(k);
            }
            t.iter().enumerate().filter(|(_, s)| cand(s)).nth(k).map(|(i, _)| i)
        };
        if m == 1 {
            return nth(0);
        }
        match self.policy {
            Policy::RoundRobin => nth(self.next.fetch_add(1, Ordering::Relaxed) % m),
            Policy::LeastLoaded => {
                let x = random_below(m);
                let mut y = random_below(m - 1);
                if y >= x {
                    y += 1;
                }
                let a = nth(x)?;
                let Some(b) = nth(y) else { return Some(a) };
                Some(if t[b].load() < t[a].load() { b } else { a })
            }
        }
    }

    /// The slot of the next RPC, its in-flight count already raised; None
    /// once close has released the channels.
    fn pick(&self) -> Option<Arc<Slot>> {
        if let Some(g) = self.growth {
            // A few tries without the lock; another RPC may take the last
            // stream of the channel chosen between the choice and the count.
            for _ in 0..4 {
                let t = self.table.load();
                let Some(i) = self.choose(&t, |s| s.load() < g.limit) else {
                    break;
                };
                if reserve(&t[i], g.limit) {
                    if t[i].grown {
                        t[i].active.store(self.now(), Ordering::Relaxed);
                    }
                    return Some(t[i].clone());
                }
            }
            // At its max the pool picks among all without the lock.
            if self.table.load().len() < g.max {
                if let Some(s) = self.grow(g) {
                    return Some(s);
                }
            }
        }
        let t = self.table.load();
        let i = self.choose(&t, |_| true).or((!t.is_empty()).then_some(0))?;
        t[i].inflight.fetch_add(1, Ordering::SeqCst);
        if t[i].grown {
            t[i].active.store(self.now(), Ordering::Relaxed);
        }
        Some(t[i].clone())
    }

    /// Under the lock: a stream on a channel below the limit if one has
    /// come free, else a new channel (counted), unless the pool is at its
    /// max or closed (None: pick among all).
    fn grow(&self, g: Growth) -> Option<Arc<Slot>> {
        let ep = self.ep.as_ref()?;
        let _lock = self.resize.lock().unwrap_or_else(|e| e.into_inner());
        let t = self.table.load_full();
        if let Some(i) = self.choose(&t, |s| s.load() < g.limit) {
            if reserve(&t[i], g.limit) {
                if t[i].grown {
                    t[i].active.store(self.now(), Ordering::Relaxed);
                }
                return Some(t[i].clone());
            }
        }
        if t.len() >= g.max || self.closed.load(Ordering::SeqCst) {
            return None;
        }
        let index = (0..).find(|i| t.iter().all(|s| s.index != *i)).unwrap_or(t.len());
        let slot = Slot::new(ep.connect_lazy(), &self.target, index, true, self.redial_ms, self.now());
        slot.inflight.store(1, Ordering::SeqCst);
        let mut next = Table::clone(&t);
        next.push(slot.clone());
        self.table.store(Arc::new(next));
        self.resizes.fetch_add(1, Ordering::Relaxed);
        if let Some(m) = self.metrics.get() {
            m.resizes.add(1, &[self.target.clone(), KeyValue::new("rpclab.pool.direction", "grow")]);
        }
        self.tend.notify_one();
        Some(slot)
    }

    /// Retires grown channels idle for the idle time and replaces channels
    /// failing for their redial delay; returns when to look again (None:
    /// when woken).
    fn tend(&self) -> Option<Duration> {
        let _lock = self.resize.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.now();
        let t = self.table.load_full();
        let mut next: Option<u64> = None;
        let mut due = |at: u64| next = Some(next.map_or(at, |n| n.min(at)));
        let mut keep = Table::with_capacity(t.len());
        let mut gone = Vec::new();
        let (mut shrunk, mut redialled) = (0, 0);
        for s in t.iter() {
            if let (Some(g), true) = (self.growth, s.grown) {
                let idle = g.idle.as_millis() as u64;
                if s.load() == 0 {
                    let at = s.active.load(Ordering::Relaxed) + idle;
                    if now >= at {
                        gone.push(Arc::downgrade(s));
                        shrunk += 1;
                        continue;
                    }
                    due(at);
                } else {
                    due(now + idle);
                }
            }
            let since = s.failing_since.load(Ordering::Relaxed);
            if let (Some(ep), true) = (&self.ep, since != 0) {
                let delay = s.delay.load(Ordering::Relaxed);
                let at = since - 1 + delay;
                if now >= at {
                    let delay = (2 * delay).min(MAX_REDIAL_DELAY.as_millis() as u64);
                    keep.push(Slot::new(ep.connect_lazy(), &self.target, s.index, s.grown, delay, now));
                    gone.push(Arc::downgrade(s));
                    redialled += 1;
                    continue;
                }
                due(at);
            }
            keep.push(s.clone());
        }
        if !gone.is_empty() {
            self.table.store(Arc::new(keep));
            self.resizes.fetch_add(shrunk, Ordering::Relaxed);
            self.redials.fetch_add(redialled, Ordering::Relaxed);
            if let Some(m) = self.metrics.get() {
                if shrunk > 0 {
                    m.resizes.add(shrunk, &[self.target.clone(), KeyValue::new("rpclab.pool.direction", "shrink")]);
                }
                if redialled > 0 {
                    m.redials.add(redialled, std::slice::from_ref(&self.target));
                }
            }
            let mut g = self.gone.lock().unwrap_or_else(|e| e.into_inner());
            g.retain(|w| w.strong_count() > 0);
            g.extend(gone.into_iter().filter(|w| w.strong_count() > 0));
        }
        next.map(|at| Duration::from_millis(at.saturating_sub(now).max(1)))
    }

    /// Whether no RPC is in flight, on the channels or on those retired.
    fn idle(&self) -> bool {
        let busy = |s: &Slot| s.inflight.load(Ordering::SeqCst) != 0;
        !self.table.load().iter().any(|s| busy(s))
            && !self
                .gone
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|w| w.upgrade().is_some_and(|s| busy(&s)))
    }
}

/// A number in 0..n (n at most 2^32), from a xorshift generator per thread
/// seeded by std's random hasher keys: no lock and no dependency.
fn random_below(n: usize) -> usize {
    thread_local! {
        static STATE: Cell<u64> = Cell::new(RandomState::new().hash_one(std::thread::current().id()) | 1);
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        (((x >> 32) * n as u64) >> 32) as usize
    })
}

/// Raises s's in-flight count if it is below limit.
fn reserve(s: &Slot, limit: usize) -> bool {
    s.inflight.fetch_update(Ordering::SeqCst, Ordering::Relaxed, |n| (n < limit).then_some(n + 1)).is_ok()
}

/// The task that retires and redials a pool's channels, until the pool is
/// closed or dropped. It holds no reference that keeps the pool alive.
async fn tend(weak: Weak<Shared>, wake: Arc<Notify>) {
    loop {
        let wait = {
            let Some(s) = weak.upgrade() else { return };
            if s.closed.load(Ordering::SeqCst) {
                return;
            }
            s.tend()
        };
        match wait {
            Some(d) => {
                tokio::select! {
                    _ = tokio::time::sleep(d) => {}
                    _ = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }
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
    /// It has no endpoint to make channels from, so it neither grows nor
    /// redials; failing channels are still skipped.
    pub fn new(channels: Vec<Channel>, policy: Policy) -> Result<Pool, Error> {
        check_size(channels.len())?;
        Ok(Pool::make(channels, policy, None, None))
    }

    /// Options for a pool to ep: size, policy, growth at the stream limit,
    /// idle timeout, redial delay; then `connect` or `connect_lazy`.
    pub fn builder(ep: Endpoint) -> Builder {
        Builder {
            ep,
            size: default_size(),
            policy: Policy::RoundRobin,
            max_connections: None,
            streams_per_connection: None,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            redial_delay: DEFAULT_REDIAL_DELAY,
        }
    }

    /// Connects n channels to ep, one connection each, together; Err on the
    /// first that fails (set `Endpoint::connect_timeout` so a target that
    /// never answers fails rather than hangs). Channels failing for 5 s are
    /// redialled; no growth (see [`Pool::builder`]).
    pub async fn connect(ep: Endpoint, n: usize, policy: Policy) -> Result<Pool, Error> {
        Pool::builder(ep).size(n).policy(policy).connect().await
    }

    /// n channels to ep that connect on their first RPC.
    pub fn connect_lazy(ep: Endpoint, n: usize, policy: Policy) -> Result<Pool, Error> {
        Pool::builder(ep).size(n).policy(policy).connect_lazy()
    }

    fn make(channels: Vec<Channel>, policy: Policy, ep: Option<(Endpoint, Duration)>, growth: Option<Growth>) -> Pool {
        let redial_ms = ep.as_ref().map_or(DEFAULT_REDIAL_DELAY, |e| e.1).as_millis() as u64;
        let target = ep.as_ref().map_or(String::new(), |e| {
            let uri = e.0.uri().to_string();
            // http::Uri shows an empty path as "/": the URI as given.
            if e.0.uri().path_and_query().is_none_or(|p| p.as_str() == "/") {
                uri.trim_end_matches('/').to_string()
            } else {
                uri
            }
        });
        let target = KeyValue::new("rpclab.pool.target", Value::String(StringValue::from(target)));
        let table =
            channels.into_iter().enumerate().map(|(i, c)| Slot::new(c, &target, i, false, redial_ms, 0)).collect();
        let (cancel, _) = watch::channel(false);
        let has_ep = ep.is_some();
        let shared = Arc::new(Shared {
            table: ArcSwap::from_pointee(table),
            resize: Mutex::new(()),
            gone: Mutex::new(Vec::new()),
            ep: ep.map(|e| e.0),
            redial_ms,
            growth,
            target,
            epoch: Instant::now(),
            next: AtomicUsize::new(0),
            policy,
            closed: AtomicBool::new(false),
            drained: Notify::new(),
            cancel,
            tend: Arc::new(Notify::new()),
            task: Mutex::new(None),
            resizes: AtomicU64::new(0),
            redials: AtomicU64::new(0),
            metrics: OnceLock::new(),
        });
        if has_ep {
            let task = tokio::spawn(tend(Arc::downgrade(&shared), shared.tend.clone()));
            *shared.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        }
        Pool { shared }
    }

    /// The number of channels now (the size, plus those grown; 0 once
    /// closed).
    pub fn len(&self) -> usize {
        self.shared.table.load().len()
    }

    /// Whether the pool has no channel: only once closed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The RPCs in flight on each channel (a snapshot).
    pub fn inflight(&self) -> Vec<usize> {
        self.shared.table.load().iter().map(|s| s.load()).collect()
    }

    /// Channels added or retired by growth so far.
    pub fn resizes(&self) -> u64 {
        self.shared.resizes.load(Ordering::Relaxed)
    }

    /// Channels replaced after failing for the redial delay so far.
    pub fn redials(&self) -> u64 {
        self.shared.redials.load(Ordering::Relaxed)
    }

    /// Closes the pool, for every clone: new RPCs fail at once with
    /// `Unavailable`; the RPCs in flight may finish for up to drain, then
    /// those left end with `Cancelled`; then every channel is released
    /// together (their connections close as the last RPC on each ends) and
    /// the pool's task ends. True if all finished within drain. A second
    /// close (or one while another is under way) returns true at once and
    /// does nothing.
    pub async fn close(&self, drain: Duration) -> bool {
        let s = &*self.shared;
        if s.closed.swap(true, Ordering::SeqCst) {
            return true;
        }
        s.tend.notify_one();
        let drained = tokio::time::timeout(drain, async {
            loop {
                let woken = s.drained.notified();
                if s.idle() {
                    return;
                }
                woken.await;
            }
        })
        .await
        .is_ok();
        // Cancels what is left, and an RPC that passed the closed check
        // just before close and picked its channel after the drain.
        s.cancel.send_replace(true);
        {
            // Under the lock, so neither growth nor a redial brings one back.
            let _lock = s.resize.lock().unwrap_or_else(|e| e.into_inner());
            s.table.store(Arc::new(Table::new()));
        }
        s.gone.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let task = s.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            // It returns when woken and closed; a panic in it is not close's.
            let _ = task.await;
        }
        drained
    }

    /// Reports the pool's metrics through an OpenTelemetry meter (e.g.
    /// `opentelemetry::global::meter("rpclab-pool")`), as docs/pool.md's
    /// table: `rpclab.pool.size` (UpDownCounter, `{connection}`; 0 once
    /// closed), `rpclab.pool.inflight` (UpDownCounter per channel,
    /// `{request}`), `rpclab.pool.picks` (Counter per channel, `{pick}`),
    /// `rpclab.pool.redials` (Counter, `{redial}`) and `rpclab.pool.resizes`
    /// (Counter, `{resize}`, attribute `rpclab.pool.direction`: `grow` or
    /// `shrink`). Every instrument has the attribute `rpclab.pool.target`
    /// (the endpoint's URI; empty for [`Pool::new`]); a channel is named by
    /// `rpclab.pool.connection`, its index. Size and in flight are
    /// observable, read at collection, so an RPC does no metrics work but
    /// the pick's count. Without it the pool reports nothing. Once per pool
    /// (later calls do nothing).
    pub fn instrument(&self, meter: &Meter) {
        let instruments = Instruments {
            picks: meter
                .u64_counter("rpclab.pool.picks")
                .with_description("RPCs and streams started, per channel")
                .with_unit("{pick}")
                .build(),
            resizes: meter
                .u64_counter("rpclab.pool.resizes")
                .with_description("Channels added or retired by growth at the stream limit")
                .with_unit("{resize}")
                .build(),
            redials: meter
                .u64_counter("rpclab.pool.redials")
                .with_description("Channels replaced after TRANSIENT_FAILURE (failing for the redial delay)")
                .with_unit("{redial}")
                .build(),
        };
        if self.shared.metrics.set(instruments).is_err() {
            return;
        }
        let weak: Weak<Shared> = Arc::downgrade(&self.shared);
        meter
            .i64_observable_up_down_counter("rpclab.pool.size")
            .with_description("Channels in the pool")
            .with_unit("{connection}")
            .with_callback(move |m| {
                if let Some(s) = weak.upgrade() {
                    let n = if s.closed.load(Ordering::SeqCst) { 0 } else { s.table.load().len() };
                    m.observe(n as i64, std::slice::from_ref(&s.target));
                }
            })
            .build();
        let weak: Weak<Shared> = Arc::downgrade(&self.shared);
        meter
            .i64_observable_up_down_counter("rpclab.pool.inflight")
            .with_description("RPCs and streams in flight, per channel")
            .with_unit("{request}")
            .with_callback(move |m| {
                if let Some(s) = weak.upgrade() {
                    for slot in s.table.load().iter() {
                        m.observe(slot.load() as i64, &slot.attrs);
                    }
                }
            })
            .build();
    }

    /// Whether close was called (on this pool or a clone).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }
}

/// Counts one RPC in flight on a channel until dropped.
struct InFlight {
    shared: Arc<Shared>,
    slot: Arc<Slot>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.slot.inflight.fetch_sub(1, Ordering::SeqCst) == 1 {
            if self.slot.grown {
                self.slot.active.store(self.shared.now(), Ordering::Relaxed);
            }
            if self.shared.closed.load(Ordering::SeqCst) {
                self.shared.drained.notify_waiters();
            }
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
            // Resets the stream, so nothing holds the connection open.
            self.inner = Body::empty();
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

/// What a channel's error means for its RPC and for the channel.
enum Failure {
    /// The endpoint's RPC timeout (`Endpoint::timeout`): the RPC's end,
    /// returned as tonic's error, as on a Channel.
    Timeout,
    /// The server reset the RPC's stream (RST_STREAM), the connection is
    /// fine: the code gRPC gives the reason (REFUSED_STREAM: Unavailable).
    Stream(tonic::Code),
    /// The connection was refused, reset or closed, or went away: the
    /// channel is failing and the RPC `Unavailable`.
    Channel,
}

fn failure(e: &(dyn std::error::Error + 'static)) -> Failure {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.is::<tonic::TimeoutExpired>() {
            return Failure::Timeout;
        }
        if let Some(h2) = e.downcast_ref::<h2::Error>() {
            // A stream's error (RST_STREAM): a reason, not a GOAWAY.
            if h2.reason().is_some() && !h2.is_go_away() {
                // grpc's doc/PROTOCOL-HTTP2.md, "Errors".
                return Failure::Stream(match h2.reason() {
                    Some(h2::Reason::REFUSED_STREAM) => tonic::Code::Unavailable,
                    Some(h2::Reason::CANCEL) => tonic::Code::Cancelled,
                    Some(h2::Reason::ENHANCE_YOUR_CALM) => tonic::Code::ResourceExhausted,
                    Some(h2::Reason::INADEQUATE_SECURITY) => tonic::Code::PermissionDenied,
                    _ => tonic::Code::Internal,
                });
            }
        }
        next = e.source();
    }
    Failure::Channel
}

/// An error and its sources: "transport error: connection error: connection reset by peer".
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        out.push_str(": ");
        out.push_str(&s.to_string());
        next = s.source();
    }
    out
}

/// A trailers-only response carrying status: how the pool ends an RPC
/// itself (`Unavailable` after close or when its channel fails, `Cancelled`
/// when close gives up), so the caller sees a gRPC status.
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
    /// until its response body ends, or the future or body is dropped. A
    /// transport error of the channel (connection refused, reset or closed)
    /// ends the RPC with `Unavailable` and counts the channel as failing, as
    /// gRPC's status codes have it for a transport failure (tonic by itself
    /// makes a reset `Unknown` and a closed connection `Cancelled`); a
    /// stream the server reset ends with the code gRPC gives its reason
    /// (REFUSED_STREAM: `Unavailable`), the channel not failing. The
    /// endpoint's RPC timeout (`Endpoint::timeout`) is returned as tonic's
    /// error, as on a Channel.
    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if self.is_closed() {
            return Box::pin(async { Ok(refuse(Status::unavailable("rpclab-pool: the pool is closed"))) });
        }
        let shared = self.shared.clone();
        let Some(slot) = shared.pick() else {
            return Box::pin(async { Ok(refuse(Status::unavailable("rpclab-pool: the pool is closed"))) });
        };
        if let Some(m) = shared.metrics.get() {
            m.picks.add(1, &slot.attrs);
        }
        let guard = InFlight { shared: shared.clone(), slot: slot.clone() };
        let call = Oneshot::new(slot.channel.clone(), req);
        let mut cancel = cancelled(&shared);
        Box::pin(async move {
            tokio::select! {
                r = call => match r {
                    Ok(resp) => {
                        if slot.failing() {
                            slot.failing_since.store(0, Ordering::Relaxed);
                            slot.delay.store(shared.redial_ms, Ordering::Relaxed);
                        }
                        let cancelled = cancelled(&shared);
                        Ok(resp.map(|inner| Body::new(Counted { inner, cancelled, guard: Some(guard) })))
                    }
                    Err(e) => match failure(&e) {
                        Failure::Timeout => Err(e),
                        Failure::Stream(code) => {
                            Ok(refuse(Status::new(code, format!("rpclab-pool: channel {}: {}", slot.index, chain(&e)))))
                        }
                        Failure::Channel => {
                            let since = shared.now() + 1;
                            let ok = slot.failing_since.compare_exchange(0, since, Ordering::Relaxed, Ordering::Relaxed);
                            if ok.is_ok() {
                                shared.tend.notify_one();
                            }
                            let msg = format!("rpclab-pool: channel {}: {}", slot.index, chain(&e));
                            Ok(refuse(Status::unavailable(msg)))
                        }
                    },
                },
                _ = &mut cancel => Ok(refuse(Status::cancelled("rpclab-pool: closed before the RPC ended"))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a source, as tonic's transport error over hyper's.
    #[derive(Debug)]
    struct Wrap(Box<dyn std::error::Error + Send + Sync>);

    impl fmt::Display for Wrap {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("transport error")
        }
    }

    impl std::error::Error for Wrap {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&*self.0)
        }
    }

    #[test]
    fn failure_tells_a_reset_stream_from_a_failed_channel() {
        let refused = Wrap(Box::new(Wrap(Box::new(h2::Error::from(h2::Reason::REFUSED_STREAM)))));
        assert!(matches!(failure(&refused), Failure::Stream(tonic::Code::Unavailable)), "REFUSED_STREAM");
        let cancel = Wrap(Box::new(h2::Error::from(h2::Reason::CANCEL)));
        assert!(matches!(failure(&cancel), Failure::Stream(tonic::Code::Cancelled)), "CANCEL");
        let reset = Wrap(Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset)));
        assert!(matches!(failure(&reset), Failure::Channel), "a connection reset");
        let timeout = Wrap(Box::new(tonic::TimeoutExpired(())));
        assert!(matches!(failure(&timeout), Failure::Timeout), "the endpoint's timeout");
    }

    /// Five channels to a port nobody dials: choose never connects them.
    fn five(policy: Policy) -> Pool {
        let ep = Endpoint::from_static("http://127.0.0.1:1");
        Pool::new((0..5).map(|_| ep.connect_lazy()).collect(), policy).unwrap()
    }

    fn set(t: &Table, loads: [usize; 5], failing: &[usize]) {
        for (i, (s, n)) in t.iter().zip(loads).enumerate() {
            s.inflight.store(n, Ordering::SeqCst);
            s.failing_since.store(u64::from(failing.contains(&i)), Ordering::Relaxed);
        }
    }

    #[tokio::test]
    async fn least_loaded_is_two_choices() {
        // Power of two choices: the lesser loaded of two different channels
        // drawn at random, so the busiest is never taken and every other
        // one is, and a failing channel never while another is not.
        let pool = five(Policy::LeastLoaded);
        let (s, t) = (&*pool.shared, pool.shared.table.load_full());
        set(&t, [4, 2, 1, 3, 0], &[4]);
        let mut got = [0usize; 5];
        for _ in 0..1000 {
            got[s.choose(&t, |_| true).unwrap()] += 1;
        }
        assert_eq!((got[0], got[4]), (0, 0), "taken per channel {got:?}: never the busiest (0) or the failing (4)");
        // Of the 12 ordered draws of 4: channel 2 wins 6, 1 wins 4, 3 wins 2.
        assert!(got[2] > got[1] && got[1] > got[3] && got[3] > 0, "taken per channel {got:?}: want 2 > 1 > 3 > 0");

        // Two different channels: of two candidates the idle one, always.
        set(&t, [5, 0, 9, 9, 9], &[2, 3, 4]);
        let picks: Vec<usize> = (0..200).map(|_| s.choose(&t, |_| true).unwrap()).collect();
        assert!(picks.iter().all(|&i| i == 1), "two candidates, loads 5 and 0: got {picks:?}, want 1 each time");

        // Equal loads: the first drawn wins, so a pick does not tell the
        // next (no turn): 999 pairs, each relation about 1 in 5.
        set(&t, [0; 5], &[]);
        let picks: Vec<usize> = (0..1000).map(|_| s.choose(&t, |_| true).unwrap()).collect();
        let same = picks.windows(2).filter(|w| w[0] == w[1]).count();
        let next = picks.windows(2).filter(|w| w[1] == (w[0] + 1) % 5).count();
        assert!((100..300).contains(&same), "{same} of 999 picks repeat the one before, want about 200");
        assert!((100..300).contains(&next), "{next} of 999 picks follow the one before in turn, want about 200");
    }

    #[tokio::test]
    async fn round_robin_takes_the_candidates_in_turn() {
        let pool = five(Policy::RoundRobin);
        let (s, t) = (&*pool.shared, pool.shared.table.load_full());
        set(&t, [0; 5], &[1, 3]);
        let picks: Vec<usize> = (0..9).map(|_| s.choose(&t, |_| true).unwrap()).collect();
        let start = picks[0];
        for (k, p) in picks.iter().enumerate() {
            assert_eq!(*p, [0, 2, 4][(start / 2 + k) % 3], "pick {k}: got {picks:?}, want 0, 2, 4 in turn");
        }
    }

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
