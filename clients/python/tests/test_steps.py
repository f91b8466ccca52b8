# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The command line (--steps FILE) and the steps file (docs/clients.md,
"The step spec"). Run by clients/conformance TestPythonUnit."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from rpclab_client.steps import FIELDS, Conn, Step, StepError, channelz_port, load, parse

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


def run_parse(args):
    """parse, with its exit as (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return parse(args), out.getvalue(), err.getvalue()
        except SystemExit as e:
            return e.code, out.getvalue(), err.getvalue()


class CommandLineTest(unittest.TestCase):
    write = StepsFileTest.write

    def test_bad_command_line_exits_2_with_usage(self):
        bad = self.write(json.dumps(GOOD) + "\n" + json.dumps(with_(inflight="x")) + "\n")
        cases = [
            ([], "required: --steps"),
            (["--steps", "/dev/null", "--bogus", "1"], "--bogus"),
            (["--steps"], "--steps"),
            (["--steps", "/dev/null", "stray"], "stray"),
            (["--steps", "/dev/null", "--target", "h:1"], "--target"),
            (["--steps", "/nonexistent/steps.jsonl"], "/nonexistent/steps.jsonl: cannot read"),
            (["--steps", bad], f"{bad}:2: inflight: "),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                code, _, err = run_parse(args)
                got = (code, want in err, "usage: rpclab-client" in err)
                self.assertEqual(got, (2, True, True), f"got {got} ({err!r}), want exit 2 naming {want!r} with usage")

    def test_good_command_line(self):
        path = self.write(json.dumps(GOOD) + "\n")
        got, _, _ = run_parse(["--steps", path])
        self.assertEqual(got, load(path), f"got {got}, want the steps of {path}")

    def test_channelz_port(self):
        path = self.write(json.dumps(GOOD) + "\n")
        self.assertEqual(channelz_port(["--steps", path]), 0)
        self.assertEqual(channelz_port(["--steps", path, "--channelz-port", "9000"]), 9000)
        self.assertEqual(run_parse(["--steps", path, "--channelz-port", "9000"])[0], load(path))
        for bad in ("0", "65536", "x"):
            with self.subTest(port=bad):
                code, _, err = run_parse(["--steps", path, "--channelz-port", bad])
                self.assertEqual((code, "--channelz-port" in err), (2, True), f"got {code} {err!r}")

    def test_help(self):
        code, out, _ = run_parse(["--help"])
        for want in ("rpclab sweep --client python", "schema/step.schema.json", "2 bad input"):
            self.assertTrue(code == 0 and want in out, f"got exit {code} and {out!r}, want 0 and {want!r}")

    def test_conns_requested(self):
        cases = [("shared", 1), ("per-worker", 8), ("channel-per-worker", 8), ("local-pool", 8),
                 ("distinct-args", 8), ("pool:3", 3), ("pool:3:least-loaded", 3)]  # fmt: skip
        for s, want in cases:
            with self.subTest(conn=s):
                got = Conn.parse(s).channels(8)
                self.assertEqual(got, want, f"got {got}, want {want}")


if __name__ == "__main__":
    unittest.main()
