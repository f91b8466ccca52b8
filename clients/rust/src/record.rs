// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! One step's result record (docs/results.md, docs/result.schema.json),
//! written as one JSON line, and the env it carries.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::flags::{Conn, Flags};

/// Histogram geometry shared by every rpclab client: 1 ns .. 100 s, 3 digits.
pub const HIGHEST: u64 = 100_000_000_000;
/// One past the largest gRPC status code (Unauthenticated = 16).
pub const CODES: usize = 17;

/// Status code names as the schema spells them, by code value.
pub const CODE_NAMES: [&str; CODES] = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST, 3).expect("valid histogram bounds")
}

/// Which client measured, on what.
pub struct Env {
    pub host_cpus: usize,
    pub client_cpus: Vec<usize>,
    pub hostname: String,
}

impl Env {
    pub fn detect() -> Env {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default().trim().to_string();
        let mut host_cpus = cpu_list(&read("/sys/devices/system/cpu/online")).len();
        if host_cpus == 0 {
            host_cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        }
        let status = read("/proc/self/status");
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or("")
            .trim()
            .to_string();
        let mut client_cpus = cpu_list(&allowed);
        if client_cpus.len() >= host_cpus {
            client_cpus.clear(); // not pinned
        }
        Env {
            host_cpus,
            client_cpus,
            hostname: read("/proc/sys/kernel/hostname"),
        }
    }

    fn json(&self) -> String {
        let mut b = format!(
            "{{\"language\":\"rust\",\"grpc_impl\":\"tonic\",\"grpc_version\":{},\"runtime_version\":{},\"host_cpus\":{}",
            s(env!("RPCLAB_TONIC_VERSION")),
            s(&format!("{} (tokio)", env!("RPCLAB_RUSTC_VERSION"))),
            self.host_cpus
        );
        if !self.client_cpus.is_empty() {
            let l: Vec<String> = self.client_cpus.iter().map(|c| c.to_string()).collect();
            let _ = write!(b, ",\"client_cpus\":[{}]", l.join(","));
        }
        let _ = write!(
            b,
            ",\"hostname\":{},\"os\":{}}}",
            s(&self.hostname),
            s(std::env::consts::OS)
        );
        b
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

pub struct Record {
    pub status: &'static str,
    pub error: String,
    pub started_at: SystemTime,
    pub unreachable: bool,
    rpc: String,
    conn: Conn,
    inflight: usize,
    requests: u64,
    by_code: [u64; CODES],
    duration_ns: u64,
    throughput: f64,
    lat: [u64; 6], // min, p50, p90, p99, p99.9, max
    mean: f64,
    hdr: String,
    cpu_ns: u64,
    cpu_per_rpc: f64,
}

impl Record {
    pub fn new(rpc: &str, conn: &Conn, inflight: usize) -> Record {
        Record {
            status: "ok",
            error: String::new(),
            started_at: SystemTime::now(),
            unreachable: false,
            rpc: rpc.to_string(),
            conn: conn.clone(),
            inflight,
            requests: 0,
            by_code: [0; CODES],
            duration_ns: 0,
            throughput: 0.0,
            lat: [0; 6],
            mean: 0.0,
            hdr: String::new(),
            cpu_ns: 0,
            cpu_per_rpc: 0.0,
        }
    }

    pub fn fail(&mut self, why: impl Into<String>) {
        self.status = "failed";
        self.error = why.into();
    }

    pub fn fill(&mut self, h: &Histogram<u64>, by_code: [u64; CODES], elapsed_ns: u64, cpu_ns: u64) {
        self.by_code = by_code;
        self.requests = by_code.iter().sum();
        let ok = by_code[0];
        self.duration_ns = elapsed_ns;
        if elapsed_ns > 0 {
            self.throughput = ok as f64 / (elapsed_ns as f64 / 1e9);
        }
        if !h.is_empty() {
            self.lat = [
                h.min(),
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.9),
                h.value_at_quantile(0.99),
                h.value_at_quantile(0.999),
                h.max(),
            ];
            self.mean = h.mean();
        }
        self.hdr = encode(h);
        self.cpu_ns = cpu_ns;
        if self.requests > 0 {
            self.cpu_per_rpc = cpu_ns as f64 / self.requests as f64;
        }
        if ok == 0 {
            if self.requests == 0 {
                self.fail("no RPC completed in the interval");
            } else {
                self.fail(format!("every RPC failed ({})", self.requests));
            }
        }
    }

    pub fn summary(&self) -> String {
        if self.status != "ok" {
            return format!("{}: {}", self.status, self.error);
        }
        format!(
            "{:.0} rps, p99 {:.1} µs, cpu {:.1} µs/rpc",
            self.throughput,
            self.lat[3] as f64 / 1e3,
            self.cpu_per_rpc / 1e3
        )
    }

    pub fn json(&self, f: &Flags, env: &Env) -> String {
        let mut b = String::with_capacity(1024 + self.hdr.len());
        let _ = write!(
            b,
            "{{\"schema_version\":1,\"kind\":\"ping\",\"status\":{}",
            s(self.status)
        );
        if !self.error.is_empty() {
            let _ = write!(b, ",\"error\":{}", s(&self.error));
        }
        let _ = write!(
            b,
            ",\"started_at\":{},\"spec\":{{\"target\":{},\"rpc\":{},\"conn_mode\":{},\"conns_requested\":{}",
            s(&rfc3339(self.started_at)),
            s(&f.target),
            s(&self.rpc),
            s(self.conn.name()),
            self.conn.conns(self.inflight)
        );
        if let Conn::Pool(_) = self.conn {
            b.push_str(",\"pick\":\"round-robin\"");
        }
        let _ = write!(
            b,
            ",\"inflight\":{},\"payload_bytes\":{},\"warmup_ns\":{},\"interval_ns\":{},\"load_model\":\"closed\"}}",
            self.inflight,
            f.payload,
            f.warmup.as_nanos(),
            f.interval.as_nanos()
        );
        let _ = write!(
            b,
            ",\"env\":{},\"requests\":{},\"errors\":{{",
            env.json(),
            self.requests
        );
        let mut first = true;
        for (c, &n) in self.by_code.iter().enumerate().skip(1) {
            if n > 0 {
                let _ = write!(b, "{}{}:{}", if first { "" } else { "," }, s(CODE_NAMES[c]), n);
                first = false;
            }
        }
        let [min, p50, p90, p99, p999, max] = self.lat;
        let _ = write!(
            b,
            "}},\"duration_ns\":{},\"throughput_rps\":{:.3},\"latency\":{{\"min_ns\":{min},\"mean_ns\":{:.3},\"p50_ns\":{p50},\"p90_ns\":{p90},\"p99_ns\":{p99},\"p999_ns\":{p999},\"p100_ns\":{max}}},\"histogram_hdr\":{},\"conns_observed\":-1,\"client_cpu_ns\":{},\"client_cpu_ns_per_rpc\":{:.3}}}",
            self.duration_ns,
            finite(self.throughput),
            finite(self.mean),
            s(&self.hdr),
            self.cpu_ns,
            finite(self.cpu_per_rpc)
        );
        b
    }
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// The histogram in HdrHistogram's compressed V2 form, base64 ("HISTFAAA...").
pub fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&buf),
        Err(_) => String::new(),
    }
}

/// A JSON string literal.
pub fn s(v: &str) -> String {
    let mut b = String::with_capacity(v.len() + 2);
    b.push('"');
    for c in v.chars() {
        match c {
            '"' => b.push_str("\\\""),
            '\\' => b.push_str("\\\\"),
            '\n' => b.push_str("\\n"),
            '\r' => b.push_str("\\r"),
            '\t' => b.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(b, "\\u{:04x}", c as u32);
            }
            c => b.push(c),
        }
    }
    b.push('"');
    b
}

/// RFC 3339 in UTC with nanoseconds, e.g. 2026-11-22T23:01:02.123456789Z.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_nanos()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_dates() {
        let cases = [
            (0u64, "1970-01-01T00:00:00.000000000Z"),
            (951_782_400, "2000-02-29T00:00:00.000000000Z"),
            (1_795_388_462, "2026-11-22T23:01:02.000000000Z"),
        ];
        for (secs, want) in cases {
            let got = rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
            assert_eq!(got, want, "rfc3339({secs})");
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
        let back: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut raw.as_slice())
            .unwrap();
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
