// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! The flags of docs/clients.md, parsed and checked as rpclab's own sweep
//! checks them. A bad flag is a `Usage` naming the flag; main exits 2 on it.

use std::fmt;
use std::time::Duration;

/// A bad flag value: the flag's name and what is wrong.
#[derive(Debug)]
pub struct Usage {
    pub flag: String,
    pub msg: String,
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.flag, self.msg)
    }
}

fn usage(flag: &str, msg: impl Into<String>) -> Usage {
    Usage {
        flag: flag.to_string(),
        msg: msg.into(),
    }
}

/// A connection layout.
#[derive(Clone, Debug, PartialEq)]
pub enum Conn {
    /// One Channel (one HTTP/2 connection) for every worker.
    Shared,
    /// A Channel per worker: tonic opens a connection per Channel.
    PerWorker,
    /// N Channels, picked round-robin per RPC.
    Pool(usize),
}

impl Conn {
    pub fn name(&self) -> &'static str {
        match self {
            Conn::Shared => "shared",
            Conn::PerWorker => "per-worker",
            Conn::Pool(_) => "pool",
        }
    }

    /// How many connections the layout opens for `inflight` workers.
    pub fn conns(&self, inflight: usize) -> usize {
        match self {
            Conn::Shared => 1,
            Conn::PerWorker => inflight,
            Conn::Pool(n) => *n,
        }
    }
}

pub const MAX_INFLIGHT: usize = 20000;
pub const MAX_PAYLOAD: usize = (4 << 20) - 64;

#[derive(Debug)]
pub struct Flags {
    pub target: String,
    pub inflight: Vec<usize>,
    pub conns: Vec<Conn>,
    pub rpcs: Vec<String>,
    pub payload: usize,
    pub warmup: Duration,
    pub interval: Duration,
    pub dial_timeout: Duration,
    /// Deadline of each RPC (each ping-pong on a stream); zero: none.
    pub rpc_timeout: Duration,
    pub out: String,
}

pub const USAGE: &str =
    "usage: rpclab-client --target HOST:PORT [--inflight 1,2,4 | --min-inflight A --max-inflight B [--step S]]
  [--conn shared,per-worker,pool:N] [--rpc unary,streaming] [--payload BYTES]
  [--warmup DUR] [--interval DUR] [--dial-timeout DUR] [--rpc-timeout DUR] [--out FILE]
durations in Go syntax (500ms, 2s, 1m); see docs/clients.md";

impl Flags {
    pub fn parse(args: &[String]) -> Result<Flags, Usage> {
        let mut f = Flags {
            target: String::new(),
            inflight: vec![],
            conns: vec![],
            rpcs: vec!["unary".into()],
            payload: 0,
            warmup: Duration::from_secs(1),
            interval: Duration::from_secs(3),
            dial_timeout: Duration::from_secs(5),
            rpc_timeout: Duration::ZERO,
            out: String::new(),
        };
        let (mut list, mut min, mut max, mut step) = (None, None, None, None);
        let mut conns = "shared,per-worker".to_string();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if !a.starts_with('-') {
                return Err(usage(a, "unexpected argument (flags only, see --help)"));
            }
            let mut name = a.trim_start_matches('-').to_string();
            if name == "help" || name == "h" {
                return Err(usage("--help", USAGE));
            }
            let value = if let Some(eq) = name.find('=') {
                let v = name[eq + 1..].to_string();
                name.truncate(eq);
                v
            } else {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| usage(&format!("--{name}"), "needs a value"))?
            };
            let flag = format!("--{name}");
            match name.as_str() {
                "target" => f.target = value.trim().to_string(),
                "inflight" => list = Some(value),
                "min-inflight" => min = Some(int(&flag, &value)?),
                "max-inflight" => max = Some(int(&flag, &value)?),
                "step" => step = Some(int(&flag, &value)?),
                "conn" => conns = value,
                "rpc" => f.rpcs = items(&flag, &value)?,
                "payload" => f.payload = int(&flag, &value)?,
                "warmup" => f.warmup = go_duration(&flag, &value)?,
                "interval" => f.interval = go_duration(&flag, &value)?,
                "dial-timeout" => f.dial_timeout = go_duration(&flag, &value)?,
                "rpc-timeout" => f.rpc_timeout = go_duration(&flag, &value)?,
                "out" | "o" => f.out = value,
                _ => return Err(usage(&flag, "unknown flag")),
            }
            i += 1;
        }
        if f.target.is_empty() {
            return Err(usage("--target", "required (HOST:PORT)"));
        }
        if list.is_some() && (min.is_some() || max.is_some() || step.is_some()) {
            return Err(usage(
                "--inflight",
                "give a list or --min-inflight/--max-inflight, not both",
            ));
        }
        if let Some(l) = list {
            for s in items("--inflight", &l)? {
                f.inflight.push(int("--inflight", &s)?);
            }
        } else if min.is_some() || max.is_some() {
            let lo = min.unwrap_or(1);
            let hi = max.unwrap_or(lo);
            let st = step.unwrap_or(1);
            if lo < 1 {
                return Err(usage("--min-inflight", format!("must be at least 1, got {lo}")));
            }
            if hi < lo {
                return Err(usage("--max-inflight", format!("{hi} is below --min-inflight {lo}")));
            }
            if st < 1 {
                return Err(usage("--step", format!("must be at least 1, got {st}")));
            }
            if hi > MAX_INFLIGHT {
                return Err(usage("--max-inflight", format!("{hi} is above {MAX_INFLIGHT}")));
            }
            f.inflight = (lo..=hi).step_by(st).collect();
        } else {
            f.inflight = vec![1, 2, 4, 8, 16, 32];
        }
        for &n in &f.inflight {
            if !(1..=MAX_INFLIGHT).contains(&n) {
                return Err(usage("--inflight", format!("{n} is outside 1..{MAX_INFLIGHT}")));
            }
        }
        for c in items("--conn", &conns)? {
            f.conns.push(parse_conn(&c)?);
        }
        for r in &f.rpcs {
            if r != "unary" && r != "streaming" {
                return Err(usage(
                    "--rpc",
                    format!("unknown RPC kind {r:?} (want unary or streaming)"),
                ));
            }
        }
        if f.payload > MAX_PAYLOAD {
            return Err(usage(
                "--payload",
                format!(
                    "{} is outside 0..{MAX_PAYLOAD} bytes (gRPC's default 4 MiB message limit)",
                    f.payload
                ),
            ));
        }
        if f.interval.is_zero() {
            return Err(usage("--interval", "must be positive"));
        }
        if f.dial_timeout.is_zero() {
            return Err(usage("--dial-timeout", "must be positive"));
        }
        Ok(f)
    }
}

fn parse_conn(s: &str) -> Result<Conn, Usage> {
    let p: Vec<&str> = s.trim().split(':').collect();
    match p[0] {
        "shared" | "per-worker" if p.len() != 1 => Err(usage("--conn", format!("{:?} takes no size", p[0]))),
        "shared" => Ok(Conn::Shared),
        "per-worker" => Ok(Conn::PerWorker),
        "pool" => {
            let n = if p.len() == 2 { p[1].parse::<usize>().unwrap_or(0) } else { 0 };
            if n < 1 {
                return Err(usage("--conn", format!("{s:?}: want pool:N with N an integer of at least 1")));
            }
            Ok(Conn::Pool(n))
        }
        "channel-per-worker" | "local-pool" | "distinct-args" => Err(usage(
            "--conn",
            format!(
                "{:?} is a C-core layout; tonic opens a connection per Channel, so use per-worker (want shared, per-worker or pool:N)",
                p[0]
            ),
        )),
        _ => Err(usage("--conn", format!("unknown connection mode {s:?} (want shared, per-worker or pool:N)"))),
    }
}

fn items(flag: &str, v: &str) -> Result<Vec<String>, Usage> {
    v.split(',')
        .map(|s| {
            let s = s.trim();
            if s.is_empty() {
                Err(usage(flag, format!("empty item in {v:?}")))
            } else {
                Ok(s.to_string())
            }
        })
        .collect()
}

fn int(flag: &str, v: &str) -> Result<usize, Usage> {
    v.trim()
        .parse::<usize>()
        .map_err(|_| usage(flag, format!("{v:?} is not a non-negative integer")))
}

/// Parses a duration as Go's time.ParseDuration does ("1m0s", "1.5s", "300ms").
pub fn go_duration(flag: &str, s: &str) -> Result<Duration, Usage> {
    let bad = || usage(flag, format!("invalid duration {s:?} (want e.g. 500ms, 2s, 1m)"));
    let mut v = s.trim();
    if let Some(rest) = v.strip_prefix('-') {
        if rest == "0" {
            return Ok(Duration::ZERO);
        }
        return Err(usage(flag, format!("negative duration {s:?}")));
    }
    v = v.strip_prefix('+').unwrap_or(v);
    if v == "0" {
        return Ok(Duration::ZERO);
    }
    if v.is_empty() {
        return Err(bad());
    }
    let mut total = 0f64;
    while !v.is_empty() {
        let num_end = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
        let num = &v[..num_end];
        if num.is_empty() || num == "." {
            return Err(bad());
        }
        let x: f64 = num.parse().map_err(|_| bad())?;
        v = &v[num_end..];
        let unit_end = v.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(v.len());
        let unit = match &v[..unit_end] {
            "ns" => 1e0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(bad()),
        };
        v = &v[unit_end..];
        total += x * unit;
    }
    if total > u64::MAX as f64 {
        return Err(usage(flag, format!("duration {s:?} is too long")));
    }
    Ok(Duration::from_nanos(total.round() as u64))
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
            ("1.5s", Some(1_500_000_000)),
            ("2h45m", Some(9_900_000_000_000)),
            ("250us", Some(250_000)),
            ("s", None),
            ("5", None),
            ("", None),
            ("-1s", None),
        ];
        for (s, want) in cases {
            let got = go_duration("--warmup", s).ok().map(|d| d.as_nanos() as u64);
            assert_eq!(got, want, "go_duration({s:?})");
        }
    }

    #[test]
    fn bad_flags_name_the_flag() {
        let cases = [
            (vec!["--target", "h:1", "--inflight", "x"], "--inflight"),
            (vec!["--inflight", "1"], "--target"),
            (vec!["--target", "h:1", "--conn", "local-pool"], "--conn"),
            (vec!["--target", "h:1", "--rpc", "bidi"], "--rpc"),
            (vec!["--target", "h:1", "--interval", "0s"], "--interval"),
            (vec!["--target", "h:1", "--bogus", "1"], "--bogus"),
            (vec!["--target", "h:1", "--inflight", "0"], "--inflight"),
        ];
        for (args, flag) in cases {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            match Flags::parse(&args) {
                Ok(f) => panic!("{args:?}: got {f:?}, want an error naming {flag}"),
                Err(u) => assert_eq!(u.flag, flag, "{args:?}: {u}"),
            }
        }
    }

    #[test]
    fn sweep_flags() {
        let args: Vec<String> = [
            "--target",
            "127.0.0.1:1",
            "--min-inflight",
            "2",
            "--max-inflight",
            "8",
            "--step",
            "3",
            "--conn",
            "shared,pool:4",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let f = Flags::parse(&args).unwrap();
        assert_eq!(f.inflight, vec![2, 5, 8]);
        assert_eq!(f.conns, vec![Conn::Shared, Conn::Pool(4)]);
    }
}
