# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The steps file (docs/clients.md, "The step spec") and the human command
line that builds the same steps. Run by clients/conformance TestPythonUnit."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from rpclab_client import cli
from rpclab_client.steps import FIELDS, Conn, Step, StepError, load

MAX_PAYLOAD = FIELDS["payload_bytes"]["maximum"]

GOOD = {
    "target": "127.0.0.1:50051",
    "service": "benchmark",
    "rpc": "unary",
    "conn": "shared",
    "inflight": 4,
    "payload_bytes": 0,
    "warmup_ns": 1_000_000_000,
    "interval_ns": 3_000_000_000,
    "client_cpus": [0],
    "out": "/tmp/r.jsonl",
}


def with_(**kw):
    """GOOD with the given fields replaced (a value of ... removes one)."""
    d = {**GOOD, **kw}
    return {k: v for k, v in d.items() if v is not ...}


class StepsFileTest(unittest.TestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp(suffix=".jsonl")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.remove, path)
        return path

    def test_good_file(self):
        second = with_(rpc="streaming", conn="pool:4:round-robin", client_cpus=..., out="b.jsonl")
        third = with_(conn="pool:2:least-loaded", inflight=8.0)
        path = self.write(json.dumps(GOOD) + "\n\n" + json.dumps(second) + "\n" + json.dumps(third) + "\n")
        got = load(path)
        want = [
            Step("127.0.0.1:50051", "benchmark", "unary", Conn("shared"), 4, 0, 10**9, 3 * 10**9, "/tmp/r.jsonl", (0,)),
            Step("127.0.0.1:50051", "benchmark", "streaming", Conn("pool", 4, "round-robin"), 4, 0, 10**9, 3 * 10**9,
                 "b.jsonl", None),
            Step("127.0.0.1:50051", "benchmark", "unary", Conn("pool", 2, "least-loaded"), 8, 0, 10**9, 3 * 10**9,
                 "/tmp/r.jsonl", (0,)),
        ]  # fmt: skip
        self.assertEqual(got, want, f"got {got}, want {want}")

    def test_bad_lines_name_line_and_field(self):
        cases = [
            ("not JSON", "{", None),
            ("not an object", "[1]", None),
            ("unknown field", with_(pick="least-loaded"), "pick"),
            ("missing target", with_(target=...), "target"),
            ("missing out", with_(out=...), "out"),
            ("duration as string", with_(warmup_ns="1s"), "warmup_ns"),
            ("duration as float", with_(interval_ns=1.5), "interval_ns"),
            ("inflight as bool", with_(inflight=True), "inflight"),
            ("inflight 0", with_(inflight=0), "inflight"),
            ("inflight too many", with_(inflight=20001), "inflight"),
            ("payload too big", with_(payload_bytes=MAX_PAYLOAD + 1), "payload_bytes"),
            ("interval 0", with_(interval_ns=0), "interval_ns"),
            ("negative warmup", with_(warmup_ns=-1), "warmup_ns"),
            ("empty target", with_(target=""), "target"),
            ("target not a string", with_(target=5), "target"),
            ("unknown rpc", with_(rpc="bidi"), "rpc"),
            ("unknown service", with_(service="echo"), "service"),
            ("unsupported service", with_(service="ydb-debug"), "service"),
            ("unknown conn", with_(conn="bogus"), "conn"),
            ("pool of 0", with_(conn="pool:0"), "conn"),
            ("unknown pick", with_(conn="pool:4:fastest"), "conn"),
            ("pool too big", with_(conn="pool:20001"), "conn"),
            ("bad cpu", with_(client_cpus=[0, -1]), "client_cpus"),
            ("cpus not a list", with_(client_cpus=0), "client_cpus"),
        ]
        for name, bad, field in cases:
            with self.subTest(name):
                line = bad if isinstance(bad, str) else json.dumps(bad)
                path = self.write(json.dumps(GOOD) + "\n" + line + "\n")
                with self.assertRaises(StepError) as cm:
                    load(path)
                got = (cm.exception.field, str(cm.exception).startswith(f"{path}:2: "))
                self.assertEqual(got, (field, True), f"got {got} ({cm.exception}), want {(field, True)}")

    def test_empty_file(self):
        with self.assertRaises(StepError):
            load(self.write("\n"))


def parse(args):
    """cli.parse, with a usage error as (exit code, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            return cli.parse(args)
        except SystemExit as e:
            return e.code, err.getvalue()


class CommandLineTest(unittest.TestCase):
    def test_go_duration(self):
        cases = [
            ("0", 0), ("0s", 0), ("300ms", 300_000_000), ("1m0s", 60_000_000_000),
            ("1.5s", 1_500_000_000), ("2h45m", 9_900_000_000_000), ("250us", 250_000),
            ("250µs", 250_000), (".5s", 500_000_000), ("1s500ms", 1_500_000_000),
            ("s", None), ("5", None), ("", None), ("-1s", None), ("1d", None), ("1.s.", None),
        ]  # fmt: skip
        for s, want in cases:
            with self.subTest(s=s):
                try:
                    got = cli.go_duration(s)
                except cli.argparse.ArgumentTypeError:
                    got = None
                self.assertEqual(got, want, f"got {got}, want {want}")

    def test_bad_flags_exit_2_naming_the_flag(self):
        cases = [
            (["--target", "h:1", "--inflight", "x"], "--inflight"),
            (["--inflight", "1"], "--target"),
            (["--target", "h:1", "--conn", "pool:0"], "--conn"),
            (["--target", "h:1", "--conn", "shared:2"], "--conn"),
            (["--target", "h:1", "--conn", "bogus"], "--conn"),
            (["--target", "h:1", "--rpc", "bidi"], "--rpc"),
            (["--target", "h:1", "--interval", "0s"], "--interval"),
            (["--target", "h:1", "--warmup", "5"], "--warmup"),
            (["--target", "h:1", "--dial-timeout", "0"], "--dial-timeout"),
            (["--target", "h:1", "--bogus", "1"], "--bogus"),
            (["--target", "h:1", "--inflight", "0"], "--inflight"),
            (["--target", "h:1", "--inflight", "1", "--min-inflight", "2"], "--inflight"),
            (["--target", "h:1", "--min-inflight", "4", "--max-inflight", "2"], "--max-inflight"),
            (["--target", "h:1", "--max-inflight", "999999999"], "--max-inflight"),
            (["--target", "h:1", "--payload", str(MAX_PAYLOAD + 1)], "--payload"),
            (["--target", "h:1", "--warmup"], "--warmup"),
            (["--target", "h:1", "stray"], "stray"),
            (["--steps", "/nonexistent/steps.jsonl"], "--steps"),
            (["--steps", "/dev/null", "--target", "h:1"], "--target"),
        ]
        for args, flag in cases:
            with self.subTest(args=args):
                code, err = parse(args)
                self.assertEqual(code, 2, f"got exit {code}, want 2")
                self.assertIn(flag, err, f"got {err!r}, want it to name {flag}")
                self.assertIn("usage: rpclab-client", err)

    def test_flags_build_steps_in_order(self):
        steps, opts, truncate = parse(
            ["--target", "127.0.0.1:1", "--min-inflight", "2", "--max-inflight", "8", "--step", "3",
             "--conn", "shared, pool:4", "--rpc=unary,streaming", "--payload", "7", "--warmup", "0",
             "--interval", "2s", "--rpc-timeout", "2s", "-o", "r.jsonl"]
        )  # fmt: skip
        got = [(s.rpc, s.conn, s.inflight) for s in steps]
        want = [(rpc, conn, n) for rpc in ("unary", "streaming")
                for conn in (Conn("shared"), Conn("pool", 4, "round-robin")) for n in (2, 5, 8)]  # fmt: skip
        self.assertEqual(got, want, f"got {got}, want {want}")
        first = steps[0]
        got = (first.target, first.payload_bytes, first.warmup_ns, first.interval_ns, first.out, truncate)
        want = ("127.0.0.1:1", 7, 0, 2_000_000_000, "r.jsonl", "r.jsonl")
        self.assertEqual(got, want, f"got {got}, want {want}")
        self.assertEqual(opts.rpc_timeout_ns, 2_000_000_000)

    def test_defaults(self):
        steps, opts, truncate = parse(["--target", "h:1"])
        got = (sorted({s.inflight for s in steps}), [s.conn for s in steps[::6]], steps[0].out,
               steps[0].warmup_ns, steps[0].interval_ns, opts, truncate)  # fmt: skip
        want = ([1, 2, 4, 8, 16, 32], [Conn("shared"), Conn("per-worker")], "-", 10**9, 3 * 10**9,
                cli.Options(5_000_000_000, 0), None)  # fmt: skip
        self.assertEqual(got, want, f"got {got}, want {want}")

    def test_conns_requested(self):
        cases = [("shared", 1), ("per-worker", 8), ("channel-per-worker", 8), ("local-pool", 8),
                 ("distinct-args", 8), ("pool:3", 3), ("pool:3:least-loaded", 3)]  # fmt: skip
        for s, want in cases:
            with self.subTest(conn=s):
                steps, _, _ = parse(["--target", "h:1", "--conn", s, "--inflight", "8"])
                got = steps[0].conn.channels(8)
                self.assertEqual(got, want, f"got {got}, want {want}")


if __name__ == "__main__":
    unittest.main()
