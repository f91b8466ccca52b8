// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! rpclab's Rust client (docs/clients.md): a closed-loop sweep on tonic
//! against a grpc.testing.BenchmarkService server, its steps from a steps
//! file (`--steps`), one JSON Lines record per step.
//! SIGINT/SIGTERM end the running step at once; its record ("interrupted")
//! and every earlier one are kept.

mod record;
mod step;

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use hdrhistogram::Histogram;
use rpclab_pool::Pool;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::Code;
use tower::util::Either;

use record::{new_histogram, Env, Record, CODES, HIGHEST};
use step::{Conn, Rpc, Step};

pub mod pb {
    tonic::include_proto!("grpc.testing");
}

use pb::benchmark_service_client::BenchmarkServiceClient;
use pb::{Payload, SimpleRequest};

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const DONE: u8 = 2;

/// How long a step waits for its channels to connect before it fails.
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);

/// rpclab's Rust client (tonic): runs the steps of a steps file against a
/// grpc.testing.BenchmarkService server and appends each step's record to
/// the step's out. `rpclab sweep --client rust` writes the steps file and
/// runs it.
#[derive(Parser, Debug)]
#[command(
    name = "rpclab-client",
    after_help = "Exit codes: 0 every step ok, 1 a step failed, 2 bad flags or a bad steps file."
)]
struct Cli {
    /// The steps, JSON Lines, one step object per line: docs/clients.md ("The step spec") and
    /// schema/step.schema.json
    #[arg(long, value_name = "FILE")]
    steps: String,
}

fn main() {
    let path = Cli::parse().steps; // a bad flag: clap's error and usage, exit 2
    let steps = std::fs::read_to_string(&path)
        .map_err(|e| format!("--steps {path}: {e}"))
        .and_then(|text| step::parse_steps(&path, &text))
        .unwrap_or_else(|e| {
            eprintln!("rpclab-client (rust): {e}");
            std::process::exit(2);
        });
    // Every out must open (for appending) before a step runs.
    for out in steps.iter().map(|s| &s.out) {
        if let Err(e) = OpenOptions::new().create(true).append(true).open(out) {
            eprintln!("rpclab-client (rust): out {out}: {e}");
            std::process::exit(1);
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap_or_else(|e| {
        eprintln!("rpclab-client (rust): start tokio: {e}");
        std::process::exit(1);
    });
    let code = rt.block_on(run(steps));
    rt.shutdown_timeout(Duration::from_millis(200));
    std::process::exit(code);
}

/// Runs the steps in order, appending each record to its out; returns the exit code.
async fn run(steps: Vec<Step>) -> i32 {
    let (stop_tx, stop) = watch::channel(false);
    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(mut int), Ok(mut term)) => {
            tokio::spawn(async move {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
                let _ = stop_tx.send(true);
            });
        }
        _ => eprintln!("rpclab-client (rust): cannot catch SIGINT/SIGTERM; a stop will lose the running step"),
    }
    let env = Env::detect();
    let mut failed = 0;
    // Targets a step could not connect to: later steps on them fail at once.
    let mut unreachable: HashMap<&str, String> = HashMap::new();
    for (i, s) in steps.iter().enumerate() {
        let (i, rpc, conn, n) = (i + 1, s.rpc.name(), s.conn.name(), s.inflight);
        if *stop.borrow() {
            return 1;
        }
        let rec = match unreachable.get(s.target.as_str()) {
            Some(why) => {
                let mut r = Record::new(s, &env);
                r.fail(format!("target unreachable: not run: {why}"));
                r
            }
            None => match run_step(s, &env, stop.clone()).await {
                Some(r) => r,
                None => return 1, // stopped before this step measured anything
            },
        };
        if rec.unreachable {
            let why = format!("step {i} ({conn} {rpc} inflight={n}) could not connect");
            unreachable.insert(&s.target, why);
        }
        if rec.status == "failed" {
            failed += 1;
        }
        if let Err(e) = append(&s.out, &rec) {
            eprintln!("rpclab-client (rust): write {}: {e}", s.out);
            return 1;
        }
        eprintln!("rpclab-client (rust): step {i}/{} {rpc} {conn} inflight={n}: {}", steps.len(), rec.summary());
        if rec.status == "interrupted" {
            return 1;
        }
    }
    i32::from(failed > 0)
}

/// Appends rec as one line to out in one write, synced, so a killed client
/// keeps whole records.
fn append(out: &str, rec: &Record) -> std::io::Result<()> {
    let mut f = OpenOptions::new().append(true).open(out)?;
    f.write_all((rec.json() + "\n").as_bytes())?;
    f.sync_data()
}

/// Sleeps for d; false if a stop was asked first.
async fn sleep(d: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    if *stop.borrow() {
        return false;
    }
    let slept = tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = stop.wait_for(|s| *s) => false,
    };
    slept && !*stop.borrow()
}

/// Opens one Channel (one connection: tonic does not share connections
/// between Channels) and waits until it is connected, retrying until deadline.
async fn connect(ep: &Endpoint, deadline: Instant, stop: &mut watch::Receiver<bool>) -> Result<Channel, String> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let err = match tokio::time::timeout(left, ep.connect()).await {
            Ok(Ok(ch)) => return Ok(ch),
            // The error and its sources, each once.
            Ok(Err(e)) => {
                std::iter::successors(std::error::Error::source(&e), |s| s.source()).fold(e.to_string(), |m, s| {
                    let s = s.to_string();
                    if m.contains(&s) {
                        m
                    } else {
                        format!("{m}: {s}")
                    }
                })
            }
            Err(_) => "timed out".to_string(),
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(err);
        }
        if !sleep(left.min(Duration::from_millis(100)), stop).await {
            return Err("stopped".into());
        }
    }
}

/// Runs one step on fresh channels; None if a stop came before its interval.
async fn run_step(s: &Step, env: &Env, mut stop: watch::Receiver<bool>) -> Option<Record> {
    let unreachable = |why: String| {
        let mut rec = Record::new(s, env);
        rec.unreachable = true;
        rec.fail(format!("target unreachable: {why}"));
        Some(rec)
    };
    let ep = match Endpoint::from_shared(format!("http://{}", s.target)) {
        Ok(ep) => ep.connect_timeout(DIAL_TIMEOUT),
        Err(e) => return unreachable(format!("bad target {:?}: {e}", s.target)),
    };
    let deadline = Instant::now() + DIAL_TIMEOUT;
    let mut channels = Vec::new();
    for _ in 0..s.conn.conns(s.inflight) {
        match connect(&ep, deadline, &mut stop).await {
            Ok(ch) => channels.push(ch),
            Err(_) if *stop.borrow() => return None,
            Err(e) => return unreachable(format!("no connection to {} within {DIAL_TIMEOUT:?}: {e}", s.target)),
        }
    }

    // A pool's RPCs go through rpclab_pool (clients/rust/pool).
    let pool = if let Conn::Pool(_, pick) = s.conn { Pool::new(channels.clone(), pick).ok() } else { None };
    let phase = Arc::new(AtomicU8::new(WARMUP));
    let (cancel_tx, cancel) = watch::channel(false);
    let req = SimpleRequest {
        response_size: s.payload_bytes as i32,
        payload: Some(Payload { r#type: 0, body: vec![0u8; s.payload_bytes].into() }),
        ..Default::default()
    };
    let mut tasks = Vec::with_capacity(s.inflight);
    for i in 0..s.inflight {
        let own = || Either::Left(channels[if s.conn == Conn::Shared { 0 } else { i }].clone());
        let svc = pool.clone().map_or_else(own, Either::Right);
        let w = Worker {
            client: BenchmarkServiceClient::new(svc),
            phase: phase.clone(),
            cancel: cancel.clone(),
            req: req.clone(),
            hist: new_histogram(),
            by_code: [0; CODES],
        };
        tasks.push(if s.rpc == Rpc::Streaming { tokio::spawn(w.streaming()) } else { tokio::spawn(w.unary()) });
    }

    let warmed = sleep(Duration::from_nanos(s.warmup_ns), &mut stop).await;
    let mut rec = Record::new(s, env); // started_at: now, as the interval begins
    let cpu0 = cpu_ns();
    let t0 = Instant::now();
    phase.store(if warmed { MEASURE } else { DONE }, Ordering::Release);
    let interrupted = warmed && !sleep(Duration::from_nanos(s.interval_ns), &mut stop).await;
    phase.store(DONE, Ordering::Release);
    let elapsed = t0.elapsed();
    let cpu = cpu_ns().saturating_sub(cpu0);
    let _ = cancel_tx.send(true);
    let mut hist = new_histogram();
    let mut by_code = [0u64; CODES];
    for t in tasks {
        if let Ok((h, c)) = t.await {
            let _ = hist.add(&h);
            for (a, b) in by_code.iter_mut().zip(c) {
                *a += b;
            }
        }
    }
    drop((channels, pool));
    if !warmed {
        return None;
    }
    rec.fill(&hist, by_code, elapsed.as_nanos() as u64, cpu);
    if interrupted {
        rec.status = "interrupted";
        rec.error = "interrupted: the interval was cut short".into();
    }
    Some(rec)
}

/// One closed-loop worker: one RPC in flight at a time, its own histogram.
struct Worker {
    client: BenchmarkServiceClient<Either<Channel, Pool>>,
    phase: Arc<AtomicU8>,
    cancel: watch::Receiver<bool>,
    req: SimpleRequest,
    hist: Histogram<u64>,
    by_code: [u64; CODES],
}

type Outcome = (Histogram<u64>, [u64; CODES]);

impl Worker {
    /// Records an RPC that began and ended inside the measured interval.
    fn done(&mut self, began: u8, d: Duration, code: Code) {
        if began != MEASURE || self.phase.load(Ordering::Acquire) != MEASURE {
            return;
        }
        let c = (code as usize).min(CODES - 1);
        self.by_code[c] += 1;
        if code == Code::Ok {
            let v = (d.as_nanos() as u64).clamp(1, HIGHEST);
            let _ = self.hist.record(v);
        }
    }

    fn cancelled(&self) -> bool {
        *self.cancel.borrow() || self.phase.load(Ordering::Acquire) == DONE
    }

    async fn unary(mut self) -> Outcome {
        let mut cancel = self.cancel.clone();
        while !self.cancelled() {
            let ph = self.phase.load(Ordering::Acquire);
            let t0 = Instant::now();
            let res = tokio::select! {
                r = self.client.unary_call(self.req.clone()) => r,
                _ = cancel.wait_for(|c| *c) => break,
            };
            self.done(ph, t0.elapsed(), res.map_or_else(|s| s.code(), |_| Code::Ok));
        }
        (self.hist, self.by_code)
    }

    /// Bidi ping-pong: one stream, a reply awaited for every request. A
    /// failed stream (an error, or the server ending it) is recorded and
    /// replaced by a new one; dropping it cancels it.
    async fn streaming(mut self) -> Outcome {
        let mut cancel = self.cancel.clone();
        'stream: while !self.cancelled() {
            let (tx, rx) = mpsc::channel::<SimpleRequest>(1);
            let mut ph = self.phase.load(Ordering::Acquire);
            // The first request goes before the call: the server sends its
            // headers only once it has something to answer.
            let _ = tx.send(self.req.clone()).await;
            let mut t0 = Instant::now();
            let opened = tokio::select! {
                r = self.client.streaming_call(ReceiverStream::new(rx)) => r,
                _ = cancel.wait_for(|c| *c) => break 'stream,
            };
            let mut inbound = match opened {
                Ok(r) => r.into_inner(),
                Err(s) => {
                    self.done(ph, t0.elapsed(), s.code());
                    continue 'stream;
                }
            };
            loop {
                let code = tokio::select! {
                    r = inbound.message() => match r {
                        Ok(Some(_)) => Code::Ok,
                        Ok(None) => Code::Unavailable, // the server ended the stream
                        Err(s) => s.code(),
                    },
                    _ = cancel.wait_for(|c| *c) => break 'stream,
                };
                self.done(ph, t0.elapsed(), code);
                if code != Code::Ok {
                    continue 'stream;
                }
                if self.cancelled() {
                    break 'stream;
                }
                ph = self.phase.load(Ordering::Acquire);
                t0 = Instant::now();
                if tx.send(self.req.clone()).await.is_err() {
                    self.done(ph, t0.elapsed(), Code::Unavailable);
                    continue 'stream;
                }
            }
        }
        (self.hist, self.by_code)
    }
}

/// The process's user+system CPU time, in nanoseconds.
fn cpu_ns() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;
    use clap::CommandFactory;

    #[test]
    fn command_line() {
        Cli::command().debug_assert();
        let help = ["rpclab sweep --client rust", "docs/clients.md", "schema/step.schema.json", "2 bad flags"];
        // The arguments; the error's kind (None: parsed) and exit code; what the
        // steps path (parsed) or the message (an error) says.
        let cases: [(&str, Option<ErrorKind>, i32, &[&str]); 5] = [
            ("--steps s.jsonl", None, 0, &["s.jsonl"]),
            ("--steps=s.jsonl", None, 0, &["s.jsonl"]),
            ("", Some(ErrorKind::MissingRequiredArgument), 2, &["--steps <FILE>", "Usage:"]),
            ("--steps s --target h:1", Some(ErrorKind::UnknownArgument), 2, &["--target", "Usage:"]),
            ("--help", Some(ErrorKind::DisplayHelp), 0, &help),
        ];
        for (args, kind, code, says) in cases {
            let (got, msg) = match Cli::try_parse_from(std::iter::once("rpclab-client").chain(args.split_whitespace()))
            {
                Ok(cli) => ((None, 0), cli.steps),
                Err(e) => ((Some(e.kind()), e.exit_code()), e.render().to_string()),
            };
            assert_eq!(got, (kind, code), "{args:?}: got kind and exit {got:?}, want {:?}", (kind, code));
            for s in says {
                assert!(msg.contains(s), "{args:?}: got {msg:?}, want it to say {s:?}");
            }
        }
    }
}
