// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! The human command line of docs/clients.md, parsed by clap into the same
//! steps a steps file holds. A bad flag is clap's error and usage, exit 2.

use std::time::Duration;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use crate::step::{Conn, Rpc, Service, Step, MAX_INFLIGHT, MAX_PAYLOAD};

/// rpclab's Rust client (tonic): a closed-loop sweep against a
/// grpc.testing.BenchmarkService server, one JSON Lines record per step.
/// Durations in Go syntax (500ms, 2s, 1m30s); see docs/clients.md.
#[derive(Parser, Debug)]
#[command(name = "rpclab-client")]
pub struct Cli {
    /// The steps to run, as JSON Lines (docs/step.schema.json); excludes the sweep flags
    #[arg(long, value_name = "FILE", conflicts_with_all = ["target", "inflight", "min_inflight", "max_inflight", "step", "conn", "rpc", "payload", "warmup", "interval", "out"])]
    pub steps: Option<String>,
    /// The server
    #[arg(long, value_name = "HOST:PORT", required_unless_present = "steps")]
    target: Option<String>,
    /// In-flight counts to sweep [default: 1,2,4,8,16,32]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=MAX_INFLIGHT as u64), conflicts_with_all = ["min_inflight", "max_inflight", "step"])]
    inflight: Vec<u64>,
    /// The sweep as a range: first in-flight count
    #[arg(long, value_name = "A", value_parser = clap::value_parser!(u64).range(1..=MAX_INFLIGHT as u64))]
    min_inflight: Option<u64>,
    /// The sweep as a range: last in-flight count
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u64).range(1..=MAX_INFLIGHT as u64))]
    max_inflight: Option<u64>,
    /// The sweep as a range: increment
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    step: Option<u64>,
    /// Connection layouts: shared, per-worker, pool:N[:least-loaded]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = Conn::parse, default_value = "shared,per-worker")]
    conn: Vec<Conn>,
    /// RPC kinds
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum, default_value = "unary")]
    rpc: Vec<Rpc>,
    /// Request payload and response size in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=MAX_PAYLOAD as u64))]
    payload: u64,
    /// Warm-up before each step's interval (not recorded)
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = go_duration)]
    warmup: Duration,
    /// Each step's measured interval
    #[arg(long, value_name = "DUR", default_value = "3s", value_parser = positive_duration)]
    interval: Duration,
    /// How long a step waits for its channels to connect
    #[arg(long, value_name = "DUR", default_value = "5s", value_parser = positive_duration)]
    pub dial_timeout: Duration,
    /// Deadline of each RPC (each ping-pong on a stream); 0: none
    #[arg(long, value_name = "DUR", default_value = "0s", value_parser = go_duration)]
    pub rpc_timeout: Duration,
    /// JSON Lines output, one record per step [default: stdout]
    #[arg(long, short = 'o', value_name = "FILE", default_value = "", hide_default_value = true)]
    out: String,
}

impl Cli {
    /// The flags' steps, in the order rpc, conn, inflight (outermost first).
    pub fn steps(&self) -> Result<Vec<Step>, clap::Error> {
        let bad = |msg: String| Cli::command().error(ErrorKind::ValueValidation, msg);
        let inflight: Vec<u64> = if !self.inflight.is_empty() {
            self.inflight.clone()
        } else if self.min_inflight.is_some() || self.max_inflight.is_some() {
            let lo = self.min_inflight.unwrap_or(1);
            let hi = self.max_inflight.unwrap_or(lo);
            if hi < lo {
                return Err(bad(format!("--max-inflight {hi} is below --min-inflight {lo}")));
            }
            (lo..=hi).step_by(self.step.unwrap_or(1) as usize).collect()
        } else {
            vec![1, 2, 4, 8, 16, 32]
        };
        let target = self.target.clone().unwrap_or_default().trim().to_string();
        if target.is_empty() {
            return Err(bad("--target must not be empty (HOST:PORT)".into()));
        }
        let mut steps = Vec::new();
        for &rpc in &self.rpc {
            for conn in &self.conn {
                for &n in &inflight {
                    steps.push(Step {
                        target: target.clone(),
                        rpc,
                        conn: conn.clone(),
                        service: Service::Benchmark,
                        inflight: n as usize,
                        payload_bytes: self.payload as usize,
                        warmup_ns: self.warmup.as_nanos() as u64,
                        interval_ns: self.interval.as_nanos() as u64,
                        client_cpus: None,
                        out: self.out.clone(),
                    });
                }
            }
        }
        Ok(steps)
    }
}

/// A duration in Go's syntax (`500ms`, `1m30s`, `1.5s`, `0`), read by
/// humantime, which takes these and more.
pub fn go_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" || s == "-0" || s == "+0" {
        return Ok(Duration::ZERO);
    }
    match humantime::parse_duration(s.strip_prefix('+').unwrap_or(s)) {
        Ok(d) if d.as_nanos() > i64::MAX as u128 => {
            Err(format!("duration {s:?} is too long (Go's limit: about 292 years)"))
        }
        Ok(d) => Ok(d),
        Err(e) => Err(format!("invalid duration {s:?} (want e.g. 500ms, 2s, 1m30s): {e}")),
    }
}

fn positive_duration(s: &str) -> Result<Duration, String> {
    go_duration(s).and_then(|d| if d.is_zero() { Err("must be positive".into()) } else { Ok(d) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let cases = [
            ("0", Some(0)),
            ("0s", Some(0)),
            ("300ms", Some(300_000_000)),
            ("1m0s", Some(60_000_000_000)),
            ("1m30s", Some(90_000_000_000)),
            ("1.5s", Some(1_500_000_000)),
            ("2h45m", Some(9_900_000_000_000)),
            ("1h0m0s", Some(3_600_000_000_000)),
            ("250us", Some(250_000)),
            ("250µs", Some(250_000)),
            ("s", None),
            ("5", None),
            ("", None),
            ("-1s", None),
            ("3000000h", None),
        ];
        for (s, want) in cases {
            let got = go_duration(s).ok().map(|d| d.as_nanos() as u64);
            assert_eq!(got, want, "go_duration({s:?}): got {got:?}, want {want:?}");
        }
    }

    fn parse(args: &str) -> Result<Vec<Step>, clap::Error> {
        Cli::try_parse_from(std::iter::once("rpclab-client").chain(args.split_whitespace()))?.steps()
    }

    #[test]
    fn bad_flags_name_the_flag() {
        let cases = [
            ("--target h:1 --inflight x", "--inflight"),
            ("--inflight 1", "--target"),
            ("--target= --inflight 1", "--target"),
            ("--target h:1 --conn local-pool", "--conn"),
            ("--target h:1 --rpc bidi", "--rpc"),
            ("--target h:1 --interval 0s", "--interval"),
            ("--target h:1 --warmup 5", "--warmup"),
            ("--target h:1 --bogus 1", "--bogus"),
            ("--target h:1 --inflight 0", "--inflight"),
            ("--target h:1 --inflight 1 --min-inflight 2", "--min-inflight"),
            ("--target h:1 --min-inflight 9 --max-inflight 2", "--max-inflight"),
            ("--target h:1 --payload 4194241", "--payload"),
            ("--steps f --target h:1", "--target"),
        ];
        for (args, flag) in cases {
            match parse(args) {
                Ok(s) => panic!("{args}: got {s:?}, want an error naming {flag}"),
                Err(e) => {
                    let msg = e.to_string();
                    assert!(msg.contains(flag), "{args}: got {msg:?}, want {flag}");
                    assert_eq!(e.exit_code(), 2, "{args}: got exit {}, want 2", e.exit_code());
                }
            }
        }
    }

    #[test]
    fn sweep_flags() {
        let args = "--target=127.0.0.1:1 --min-inflight 2 --max-inflight 8 --step 3 --conn shared,pool:4 \
                    --rpc unary,streaming --warmup 500ms";
        let steps = parse(args).unwrap();
        let got: Vec<(Rpc, Conn, usize)> = steps.iter().map(|s| (s.rpc, s.conn.clone(), s.inflight)).collect();
        let mut want = vec![];
        for rpc in [Rpc::Unary, Rpc::Streaming] {
            for conn in [Conn::Shared, Conn::Pool(4, rpclab_pool::Policy::RoundRobin)] {
                for n in [2, 5, 8] {
                    want.push((rpc, conn.clone(), n));
                }
            }
        }
        assert_eq!(got, want, "got {got:?}, want {want:?}");
        assert_eq!(steps[0].warmup_ns, 500_000_000, "got {}, want 500ms", steps[0].warmup_ns);
        assert_eq!(steps[0].interval_ns, 3_000_000_000, "got {}, want 3s", steps[0].interval_ns);
    }
}
