# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The record's pieces. Run by clients/conformance TestPythonUnit; the Go
side's decoding of the histogram is TestPythonHistogram."""

import base64
import json
import unittest
import zlib

from rpclab_client import record
from rpclab_client.steps import Conn, Step


def step(conn, inflight, payload=0, cpus=None):
    return Step("127.0.0.1:9", "benchmark", "unary", conn, inflight, payload, 0, 1, "-", cpus)


class RecordTest(unittest.TestCase):
    def test_rfc3339(self):
        cases = [
            (0, "1970-01-01T00:00:00.000000000Z"),
            (951_782_400_000_000_001, "2000-02-29T00:00:00.000000001Z"),
            (1_795_388_462_500_000_000, "2026-11-22T23:01:02.500000000Z"),
        ]
        for ns, want in cases:
            self.assertEqual(record.rfc3339(ns), want)

    def test_code_names(self):
        got = [record.CODE_NAMES[c] for c in (0, 1, 4, 14, 16)] + [len(record.CODE_NAMES)]
        want = ["OK", "Canceled", "DeadlineExceeded", "Unavailable", "Unauthenticated", 17]
        self.assertEqual(got, want, f"got {got}, want {want}")

    def test_cpu_list(self):
        self.assertEqual(record.cpu_list("0-2,5"), [0, 1, 2, 5])
        self.assertEqual(record.cpu_list("1"), [1])
        self.assertEqual(record.cpu_list(""), [])
        self.assertEqual(record.cpu_list("x"), [])

    def test_merge_keeps_min(self):
        a, b, empty = record.new_histogram(), record.new_histogram(), record.new_histogram()
        a.record_value(5000)
        b.record_value(70_000)
        h = record.merge([empty, a, empty, b])
        self.assertEqual(h.get_total_count(), 2)
        self.assertEqual(h.get_min_value(), 5000)
        self.assertEqual(h.get_max_value(), h.get_highest_equivalent_value(70_000))

    def test_encoding_is_v2_compressed(self):
        h = record.new_histogram()
        for v in (1, 30_000, 31_000, 2_000_000):
            h.record_value(v)
        enc = record.encode(h)
        self.assertTrue(enc.startswith("HISTFAAA"), enc)
        raw = base64.b64decode(enc)
        # Compressed V2 cookie, then the length of the zlib payload.
        self.assertEqual(raw[:4], bytes.fromhex("1c849314"))
        inner = zlib.decompress(raw[8:])
        # V2 encoding cookie (0x1c849303) with the 0x10 flag, as HdrHistogram's
        # Java reference writes it.
        self.assertEqual(inner[:4], bytes.fromhex("1c849313"))

    def test_json_fields(self):
        rec = record.Record(step(Conn("pool", 2, "least-loaded"), 4, payload=10, cpus=(3, 1)))
        h = record.new_histogram()
        h.record_value(100_000)
        by_code = [0] * record.CODES
        by_code[0], by_code[14] = 1, 2
        rec.fill(h, by_code, 1_000_000_000, 3_000_000)
        d = json.loads(rec.json(record.Env("1.0")))
        self.assertEqual(d["status"], "ok")
        self.assertEqual(d["requests"], 3)
        self.assertEqual(d["errors"], {"Unavailable": 2})
        self.assertEqual(d["spec"]["pick"], "least-loaded")
        self.assertEqual(d["spec"]["conns_requested"], 2)
        self.assertEqual(d["client_cpu_ns_per_rpc"], 1_000_000.0)
        self.assertEqual(d["env"]["language"], "python")
        self.assertEqual(d["env"]["client_cpus"], [3, 1])  # the step's pin
        self.assertEqual(d["spec"]["payload_bytes"], 10)

    def test_every_rpc_failed(self):
        rec = record.Record(step(Conn("shared"), 1))
        by_code = [0] * record.CODES
        by_code[4] = 3
        rec.fill(record.new_histogram(), by_code, 1_000_000_000, 1)
        self.assertEqual(rec.status, "failed")
        self.assertIn("every RPC failed", rec.error)


if __name__ == "__main__":
    unittest.main()
