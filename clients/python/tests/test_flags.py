# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""Flag parsing (docs/clients.md). Run by clients/conformance TestPythonUnit."""

import unittest

from rpclab_client import flags
from rpclab_client.flags import Conn


class DurationTest(unittest.TestCase):
    def test_go_syntax(self):
        cases = [
            ("0", 0), ("0s", 0), ("300ms", 300_000_000), ("1m0s", 60_000_000_000),
            ("1.5s", 1_500_000_000), ("2h45m", 9_900_000_000_000), ("250us", 250_000),
            ("250µs", 250_000), (".5s", 500_000_000), ("1s500ms", 1_500_000_000),
            ("s", None), ("5", None), ("", None), ("-1s", None), ("1d", None), ("1.s.", None),
        ]
        for s, want in cases:
            with self.subTest(s=s):
                try:
                    got = flags.go_duration("--warmup", s)
                except flags.Usage as u:
                    self.assertEqual(u.flag, "--warmup")
                    got = None
                self.assertEqual(got, want)


class FlagsTest(unittest.TestCase):
    def test_bad_flags_name_the_flag(self):
        cases = [
            (["--target", "h:1", "--inflight", "x"], "--inflight"),
            (["--inflight", "1"], "--target"),
            (["--target", "h:1", "--conn", "pool:0"], "--conn"),
            (["--target", "h:1", "--conn", "shared:2"], "--conn"),
            (["--target", "h:1", "--conn", "bogus"], "--conn"),
            (["--target", "h:1", "--rpc", "bidi"], "--rpc"),
            (["--target", "h:1", "--interval", "0s"], "--interval"),
            (["--target", "h:1", "--dial-timeout", "0"], "--dial-timeout"),
            (["--target", "h:1", "--bogus", "1"], "--bogus"),
            (["--target", "h:1", "--inflight", "0"], "--inflight"),
            (["--target", "h:1", "--inflight", "1", "--min-inflight", "2"], "--inflight"),
            (["--target", "h:1", "--min-inflight", "4", "--max-inflight", "2"], "--max-inflight"),
            (["--target", "h:1", "--payload", str(flags.MAX_PAYLOAD + 1)], "--payload"),
            (["--target", "h:1", "--warmup"], "--warmup"),
            (["--target", "h:1", "stray"], "stray"),
        ]
        for args, flag in cases:
            with self.subTest(args=args):
                with self.assertRaises(flags.Usage) as cm:
                    flags.parse(args)
                self.assertEqual(cm.exception.flag, flag, str(cm.exception))

    def test_sweep_flags(self):
        f = flags.parse(["--target", "127.0.0.1:1", "--min-inflight", "2", "--max-inflight", "8",
                         "--step", "3", "--conn", "shared, pool:4,channel-per-worker",
                         "--rpc=unary,streaming", "--rpc-timeout", "2s", "-o", "r.jsonl"])
        self.assertEqual(f.inflight, [2, 5, 8])
        self.assertEqual(f.conns, [Conn("shared"), Conn("pool", 4), Conn("channel-per-worker")])
        self.assertEqual(f.rpcs, ["unary", "streaming"])
        self.assertEqual(f.rpc_timeout_ns, 2_000_000_000)
        self.assertEqual(f.out, "r.jsonl")

    def test_defaults(self):
        f = flags.parse(["--target", "h:1"])
        self.assertEqual(f.inflight, [1, 2, 4, 8, 16, 32])
        self.assertEqual(f.conns, [Conn("shared"), Conn("per-worker")])
        self.assertEqual(f.dial_timeout_ns, 5_000_000_000)
        self.assertEqual(f.rpc_timeout_ns, 0)

    def test_conns_requested(self):
        cases = [("shared", 1), ("per-worker", 8), ("channel-per-worker", 8), ("local-pool", 8),
                 ("distinct-args", 8), ("pool:3", 3)]
        for s, want in cases:
            with self.subTest(conn=s):
                self.assertEqual(flags.parse_conn(s).conns(8), want)


if __name__ == "__main__":
    unittest.main()
