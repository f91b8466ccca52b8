// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! One step of a run (docs/clients.md, "The step spec"), and the steps file:
//! JSON Lines, each line validated against schema/step.schema.json (embedded
//! at build time) by the jsonschema crate, then read with serde into a typed
//! step; the whole file is checked before any step runs.

use std::sync::OnceLock;

use rpclab_pool::Policy;
use serde::Deserialize;

/// The one step schema, from the repository's docs at build time.
const SCHEMA: &str = include_str!("../../../schema/step.schema.json");

/// A connection layout.
#[derive(Clone, Debug, PartialEq)]
pub enum Conn {
    /// One Channel (one HTTP/2 connection) for every worker.
    Shared,
    /// A Channel per worker: tonic opens a connection per Channel.
    PerWorker,
    /// N Channels behind one rpclab_pool::Pool, picked per RPC.
    Pool(usize, Policy),
}

impl Conn {
    pub fn name(&self) -> &'static str {
        match self {
            Conn::Shared => "shared",
            Conn::PerWorker => "per-worker",
            Conn::Pool(..) => "pool",
        }
    }

    /// How many connections the layout opens for `inflight` workers.
    pub fn conns(&self, inflight: usize) -> usize {
        match self {
            Conn::Shared => 1,
            Conn::PerWorker => inflight,
            Conn::Pool(n, _) => *n,
        }
    }

    /// Parses a step's `conn`, which the schema has checked: what it allows
    /// and tonic lacks are the C-core layouts.
    fn parse(s: &str) -> Result<Conn, String> {
        let pool = |n: &str, pick: &str| match (n.parse::<usize>(), pick.parse::<Policy>()) {
            (Ok(n @ 1..), Ok(pick)) => Ok(Conn::Pool(n, pick)),
            _ => Err(format!("{s:?}: want pool:N[:least-loaded], N at least 1")),
        };
        match s.split(':').collect::<Vec<_>>().as_slice() {
            ["shared"] => Ok(Conn::Shared),
            ["per-worker"] => Ok(Conn::PerWorker),
            ["pool", n] => pool(n, "round-robin"),
            ["pool", n, pick] => pool(n, pick),
            _ => Err(format!("{s:?} is a C-core layout; tonic opens a connection per Channel, so use per-worker")),
        }
    }
}

/// The RPC a step makes.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rpc {
    Unary,
    Streaming,
}

impl Rpc {
    pub fn name(self) -> &'static str {
        match self {
            Rpc::Unary => "unary",
            Rpc::Streaming => "streaming",
        }
    }
}

/// The service a step pings: this client speaks BenchmarkService only.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    Benchmark,
}

/// One step, one line of a steps file (schema/step.schema.json).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub target: String,
    pub service: Service,
    pub rpc: Rpc,
    #[serde(deserialize_with = "conn")]
    pub conn: Conn,
    pub inflight: usize,
    pub payload_bytes: usize,
    pub warmup_ns: u64,
    pub interval_ns: u64,
    /// The pin the driver gave the client; None: the client reads its own.
    pub client_cpus: Option<Vec<usize>>,
    /// The JSON Lines file the record is appended to.
    pub out: String,
}

fn conn<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Conn, D::Error> {
    Conn::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// The schema, compiled once.
fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let schema = serde_json::from_str(SCHEMA).expect("schema/step.schema.json is JSON");
        jsonschema::validator_for(&schema).expect("schema/step.schema.json is a JSON schema")
    })
}

/// The step field a schema error is about, and what is wrong with it.
fn schema_error(e: &jsonschema::ValidationError) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    let field = match (e.instance_path().as_str(), e.kind()) {
        ("", K::Required { property }) => property.as_str().unwrap_or_default().to_string(),
        ("", K::AdditionalProperties { unexpected }) => unexpected.join(", "),
        ("", K::Type { .. }) => return "not a JSON object".into(),
        (path, _) => path.trim_start_matches('/').split('/').next().unwrap_or_default().to_string(),
    };
    format!("field {field:?}: {e}")
}

/// Reads a steps file's text: every line a step, all checked before any runs.
/// Err names the line and the field.
pub fn parse_steps(name: &str, text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = format!("{name}:{}", i + 1);
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("{at}: not JSON: {e}"))?;
        if let Some(e) = validator().iter_errors(&v).next() {
            return Err(format!("{at}: {}", schema_error(&e)));
        }
        // What the schema allows and tonic lacks: C-core layouts, ydb-debug.
        let step = serde_path_to_error::deserialize(v)
            .map_err(|e| format!("{at}: field {:?}: {}", e.path().to_string(), e.inner()))?;
        steps.push(step);
    }
    if steps.is_empty() {
        return Err(format!("{name}: no steps"));
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"target":"127.0.0.1:1","service":"benchmark","rpc":"unary","conn":"shared","inflight":4,"payload_bytes":0,"warmup_ns":1000000000,"interval_ns":3000000000,"client_cpus":[0],"out":"/tmp/a.jsonl"}"#;

    /// GOOD with `field` set to the raw JSON `value`, or dropped when None.
    fn with(field: &str, value: Option<&str>) -> String {
        let mut m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(GOOD).unwrap();
        match value {
            Some(v) => m.insert(field.into(), serde_json::from_str(v).unwrap()),
            None => m.remove(field),
        };
        serde_json::to_string(&m).unwrap()
    }

    #[test]
    fn good_file() {
        let text = format!(
            "{GOOD}\n\n{}\n{}\n{}",
            with("conn", Some(r#""pool:4:round-robin""#)),
            with("conn", Some(r#""per-worker""#)),
            with("conn", Some(r#""pool:2:least-loaded""#))
        );
        let got = parse_steps("s.jsonl", &text).unwrap();
        let want = Step {
            target: "127.0.0.1:1".into(),
            service: Service::Benchmark,
            rpc: Rpc::Unary,
            conn: Conn::Shared,
            inflight: 4,
            payload_bytes: 0,
            warmup_ns: 1_000_000_000,
            interval_ns: 3_000_000_000,
            client_cpus: Some(vec![0]),
            out: "/tmp/a.jsonl".into(),
        };
        assert_eq!(got.len(), 4, "got {got:?}, want 4 steps");
        assert_eq!(got[0], want, "got {:?}, want {want:?}", got[0]);
        assert_eq!(got[1].conn, Conn::Pool(4, Policy::RoundRobin), "got {:?}, want pool:4", got[1].conn);
        assert_eq!(got[3].conn, Conn::Pool(2, Policy::LeastLoaded), "got {:?}, want pool:2:least-loaded", got[3].conn);
        assert_eq!(got[2].conn, Conn::PerWorker, "got {:?}, want per-worker", got[2].conn);
        let no_pin = parse_steps("s", &with("client_cpus", None)).unwrap();
        assert_eq!(no_pin[0].client_cpus, None, "got {:?}, want None", no_pin[0].client_cpus);
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let cases = [
            ("[1,2]".to_string(), "not a JSON object"),
            ("{".to_string(), "not JSON"),
            (with("bogus", Some("1")), "bogus"),
            (with("out", None), "out"),
            (with("target", None), "target"),
            (with("warmup_ns", Some(r#""1s""#)), "warmup_ns"),
            (with("interval_ns", Some("1.5")), "interval_ns"),
            (with("inflight", Some("-1")), "inflight"),
            (with("inflight", Some("0")), "inflight"),
            (with("inflight", Some("20001")), "inflight"),
            (with("payload_bytes", Some("4194241")), "payload_bytes"),
            (with("interval_ns", Some("0")), "interval_ns"),
            (with("rpc", Some(r#""bidi""#)), "rpc"),
            (with("service", Some(r#""ydb-debug""#)), "service"),
            (with("conn", Some(r#""local-pool""#)), "conn"),
            (with("conn", Some(r#""pool:4:fastest""#)), "conn"),
            (with("client_cpus", Some("[-1]")), "client_cpus"),
            (with("conn", Some(r#""pool:0""#)), "conn"),
            (with("conn", Some(r#""shared:2""#)), "conn"),
            (with("client_cpus", Some(r#"["0"]"#)), "client_cpus"),
            (with("target", Some(r#""""#)), "target"),
        ];
        for (line, field) in cases {
            let text = format!("{GOOD}\n{line}\n");
            match parse_steps("s.jsonl", &text) {
                Ok(s) => panic!("{line}: got {s:?}, want an error naming {field}"),
                Err(e) => assert!(
                    e.starts_with("s.jsonl:2: ") && e.contains(field),
                    "{line}: got {e:?}, want line 2 and {field:?}"
                ),
            }
        }
        assert!(parse_steps("s", "\n").is_err(), "an empty file: got Ok, want an error");
    }
}
