// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! One step's result record (docs/results.md, schema/result.schema.json),
//! written as one JSON line, and the env it carries.

use std::collections::BTreeMap;
use std::time::SystemTime;

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Serialize, Serializer};

use crate::step::{Conn, Step};

/// Histogram geometry shared by every rpclab client: 1 ns .. 100 s, 3 digits.
pub const HIGHEST: u64 = 100_000_000_000;
/// One past the largest gRPC status code (Unauthenticated = 16).
pub const CODES: usize = 17;

/// A status code's name as the schema spells it: tonic's, but "OK" and "Canceled".
fn code_name(c: usize) -> String {
    match tonic::Code::from(c as i32) {
        tonic::Code::Ok => "OK".into(),
        tonic::Code::Cancelled => "Canceled".into(),
        code => format!("{code:?}"),
    }
}

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST, 3).expect("valid histogram bounds")
}

/// Which client measured, on what.
#[derive(Clone, Default, Serialize)]
pub struct Env {
    language: &'static str,
    grpc_impl: &'static str,
    grpc_version: &'static str,
    runtime_version: String,
    pub host_cpus: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub client_cpus: Vec<usize>,
    pub hostname: String,
    os: &'static str,
}

impl Env {
    pub fn detect() -> Env {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default().trim().to_string();
        let mut host_cpus = cpu_list(&read("/sys/devices/system/cpu/online")).len();
        if host_cpus == 0 {
            host_cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        }
        let status = read("/proc/self/status");
        let allowed = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap_or("");
        let mut client_cpus = cpu_list(allowed);
        if client_cpus.len() >= host_cpus {
            client_cpus.clear(); // not pinned
        }
        Env {
            language: "rust",
            grpc_impl: "tonic",
            grpc_version: env!("RPCLAB_TONIC_VERSION"),
            runtime_version: format!("{} (tokio)", env!("RPCLAB_RUSTC_VERSION")),
            host_cpus,
            client_cpus,
            hostname: read("/proc/sys/kernel/hostname"),
            os: std::env::consts::OS,
        }
    }
}

/// Expands a kernel CPU list ("0-2,5").
pub fn cpu_list(s: &str) -> Vec<usize> {
    let mut out = vec![];
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut r = part.splitn(2, '-');
        let lo = r.next().and_then(|x| x.trim().parse::<usize>().ok());
        let hi = r.next().map(|x| x.trim().parse::<usize>().ok()).unwrap_or(lo);
        match (lo, hi) {
            (Some(lo), Some(hi)) => out.extend(lo..=hi),
            _ => return vec![],
        }
    }
    out
}

/// One step's record, serialised by serde_json as schema/result.schema.json has it.
#[derive(Default, Serialize)]
pub struct Record {
    schema_version: u32,
    kind: &'static str,
    pub status: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// RFC 3339 in UTC with nanoseconds: when new() made the record.
    started_at: String,
    spec: Spec,
    env: Env,
    requests: u64,
    errors: BTreeMap<String, u64>,
    duration_ns: u64,
    #[serde(serialize_with = "finite")]
    throughput_rps: f64,
    latency: Latency,
    histogram_hdr: String,
    conns_observed: i64,
    client_cpu_ns: u64,
    #[serde(serialize_with = "finite")]
    client_cpu_ns_per_rpc: f64,
    #[serde(skip)]
    pub unreachable: bool,
}

#[derive(Default, Serialize)]
struct Spec {
    target: String,
    rpc: &'static str,
    conn_mode: &'static str,
    conns_requested: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pick: Option<&'static str>,
    inflight: usize,
    payload_bytes: usize,
    warmup_ns: u64,
    interval_ns: u64,
    load_model: &'static str,
}

#[derive(Default, Serialize)]
struct Latency {
    min_ns: u64,
    #[serde(serialize_with = "finite")]
    mean_ns: f64,
    p50_ns: u64,
    p90_ns: u64,
    p99_ns: u64,
    p999_ns: u64,
    p100_ns: u64,
}

impl Record {
    /// A record of step s, measured on env (its client_cpus the step's pin if it has one).
    pub fn new(s: &Step, env: &Env) -> Record {
        let env = Env { client_cpus: s.client_cpus.clone().unwrap_or_else(|| env.client_cpus.clone()), ..env.clone() };
        Record {
            schema_version: 1,
            kind: "ping",
            status: "ok",
            spec: Spec {
                target: s.target.clone(),
                rpc: s.rpc.name(),
                conn_mode: s.conn.name(),
                conns_requested: s.conn.conns(s.inflight),
                pick: if let Conn::Pool(_, p) = s.conn { Some(p.name()) } else { None },
                inflight: s.inflight,
                payload_bytes: s.payload_bytes,
                warmup_ns: s.warmup_ns,
                interval_ns: s.interval_ns,
                load_model: "closed",
            },
            env,
            conns_observed: -1,
            started_at: humantime::format_rfc3339_nanos(SystemTime::now()).to_string(),
            ..Default::default()
        }
    }

    pub fn fail(&mut self, why: impl Into<String>) {
        self.status = "failed";
        self.error = why.into();
    }

    pub fn fill(&mut self, h: &Histogram<u64>, by_code: [u64; CODES], elapsed_ns: u64, cpu_ns: u64) {
        self.requests = by_code.iter().sum();
        self.errors = (1..CODES).filter(|&c| by_code[c] > 0).map(|c| (code_name(c), by_code[c])).collect();
        let ok = by_code[0];
        self.duration_ns = elapsed_ns;
        if elapsed_ns > 0 {
            self.throughput_rps = ok as f64 / (elapsed_ns as f64 / 1e9);
        }
        if !h.is_empty() {
            self.latency = Latency {
                min_ns: h.min(),
                mean_ns: h.mean(),
                p50_ns: h.value_at_quantile(0.5),
                p90_ns: h.value_at_quantile(0.9),
                p99_ns: h.value_at_quantile(0.99),
                p999_ns: h.value_at_quantile(0.999),
                p100_ns: h.max(),
            };
        }
        self.histogram_hdr = encode(h);
        self.client_cpu_ns = cpu_ns;
        if self.requests > 0 {
            self.client_cpu_ns_per_rpc = cpu_ns as f64 / self.requests as f64;
        }
        match (ok, self.requests) {
            (0, 0) => self.fail("no RPC completed in the interval"),
            (0, n) => self.fail(format!("every RPC failed ({n})")),
            _ => {}
        }
    }

    pub fn summary(&self) -> String {
        if self.status != "ok" {
            return format!("{}: {}", self.status, self.error);
        }
        let (rps, p99, cpu) = (self.throughput_rps, self.latency.p99_ns as f64 / 1e3, self.client_cpu_ns_per_rpc / 1e3);
        format!("{rps:.0} rps, p99 {p99:.1} µs, cpu {cpu:.1} µs/rpc")
    }

    /// The record as one JSON line, without the newline.
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("a record serialises")
    }
}

/// A float as JSON takes it: NaN and infinities, which it cannot, as 0.
fn finite<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(if v.is_finite() { *v } else { 0.0 })
}

/// The histogram in HdrHistogram's compressed V2 form, base64 ("HISTFAAA...").
pub fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&buf),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn record_json() {
        let line = r#"{"target":"h:1","service":"benchmark","rpc":"streaming","conn":"pool:3","inflight":4,
            "payload_bytes":7,"warmup_ns":500000000,"interval_ns":2000000000,"client_cpus":[1],"out":"o"}"#;
        let step = &crate::step::parse_steps("s", &line.replace('\n', "")).unwrap()[0];
        let mut env = Env::detect();
        env.client_cpus = vec![0, 1];
        env.hostname = "a\"b\n".into();
        let before = SystemTime::now();
        let mut r = Record::new(step, &env);
        let after = SystemTime::now();
        let mut h = new_histogram();
        h.record(1000).unwrap();
        let mut by_code = [0; CODES];
        (by_code[0], by_code[1], by_code[14]) = (1, 1, 2);
        r.fill(&h, by_code, 2_000_000_000, 3000);
        let got: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        let cases = [
            ("/env/client_cpus", serde_json::json!([1])),
            ("/env/hostname", serde_json::json!("a\"b\n")),
            ("/env/language", serde_json::json!("rust")),
            ("/spec/conn_mode", serde_json::json!("pool")),
            ("/spec/pick", serde_json::json!("round-robin")),
            ("/spec/conns_requested", serde_json::json!(3)),
            ("/spec/rpc", serde_json::json!("streaming")),
            ("/spec/warmup_ns", serde_json::json!(500_000_000)),
            ("/requests", serde_json::json!(4)),
            ("/errors", serde_json::json!({"Canceled": 1, "Unavailable": 2})),
            ("/throughput_rps", serde_json::json!(0.5)),
            ("/latency/p50_ns", serde_json::json!(1000)),
            ("/conns_observed", serde_json::json!(-1)),
            ("/client_cpu_ns_per_rpc", serde_json::json!(750.0)),
            ("/status", serde_json::json!("ok")),
        ];
        for (ptr, want) in cases {
            let got = got.pointer(ptr);
            assert_eq!(got, Some(&want), "{ptr}: got {got:?}, want {want}");
        }
        // started_at: RFC 3339 in UTC with nanoseconds, when the record was made.
        let at = got["started_at"].as_str().unwrap_or_default();
        let t = humantime::parse_rfc3339(at).unwrap_or(UNIX_EPOCH);
        assert!(
            at.len() == 30 && before <= t && t <= after,
            "got started_at {at:?}, want one between {before:?} and {after:?}"
        );
        assert!(got.get("error").is_none(), "got error {:?}, want none", got.get("error"));
    }

    #[test]
    fn status() {
        let line = r#"{"target":"h:1","service":"benchmark","rpc":"unary","conn":"shared","inflight":1,"payload_bytes":0,"warmup_ns":0,"interval_ns":1,"out":"o"}"#;
        let step = &crate::step::parse_steps("s", line).unwrap()[0];
        // OK and Unavailable counts; the status and error they give.
        let cases = [
            (1, 2, "ok", ""),
            (0, 0, "failed", "no RPC completed in the interval"),
            (0, 3, "failed", "every RPC failed (3)"),
        ];
        for (ok, unavailable, status, error) in cases {
            let mut r = Record::new(step, &Env::default());
            let mut by_code = [0; CODES];
            (by_code[0], by_code[14]) = (ok, unavailable);
            r.fill(&new_histogram(), by_code, 1, 0);
            let got = (r.status, r.error.as_str());
            assert_eq!(
                got,
                (status, error),
                "{ok} ok, {unavailable} Unavailable: got {got:?}, want {:?}",
                (status, error)
            );
        }
    }

    #[test]
    fn histogram_round_trips() {
        let mut h = new_histogram();
        for v in [1u64, 30_000, 31_000, 2_000_000] {
            h.record(v).unwrap();
        }
        let enc = encode(&h);
        assert!(enc.starts_with("HISTFAAA"), "got {enc}");
        let raw = base64::engine::general_purpose::STANDARD.decode(&enc).unwrap();
        let back: Histogram<u64> =
            hdrhistogram::serialization::Deserializer::new().deserialize(&mut raw.as_slice()).unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list("0-2,5"), vec![0, 1, 2, 5]);
        assert_eq!(cpu_list("1"), vec![1]);
        assert_eq!(cpu_list(""), Vec::<usize>::new());
    }
}
