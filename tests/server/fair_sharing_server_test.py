"""Fair sharing under load on the real rpt-server (--api-keys, server/fair_queue.h): while one
tenant floods a model's admission queue, only the flooder is refused (429 / RESOURCE_EXHAUSTED),
a light tenant's calls all succeed, its sentences wait less than the flooder's (they do not
queue behind the flood), and while they wait the flooder is refused past its share of the queue.
/metrics shows the per-tenant queue time and refusals.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/fair_sharing_server_test.py
"""
import os
import shutil
import tempfile
import threading
import time
import unittest

from rpt_server import FIXTURE_MODEL, ServerProcess

FLOOD = "flood-0123456789abcdef"
LIGHT = "light-0123456789abcdef"
TEXT = "Save the file."
KEYS = f"""tenants:
  - name: flood
    keys: [{FLOOD}]
  - name: light
    keys: [{LIGHT}]
"""
# Long decodes (the fixture model stops only at max_length; no cache answers the same text), two
# sentences decoding at a time, and a queue of 8: the flood keeps it full.
SERVER_FLAGS = ["--cache-size", "0", "--max-decoding-length", "2000",
                "--max-active-sentences", "2", "--max-queued-sentences", "8"]
FLOOD_CALL = {"texts": [TEXT] * 2, "options": {"beam_size": 1, "max_length": 200,
                                               "min_length": 200}}
LIGHT_CALL = {"texts": [TEXT], "options": {"beam_size": 1, "max_length": 5}}
LIGHT_CALLS = 10
FLOODERS = 8


def bearer(key):
    return {"Authorization": f"Bearer {key}"}


class FairSharingServerTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="rpt_fair_test_")
        keys = os.path.join(self.directory, "keys.yaml")
        with open(keys, "w") as f:
            f.write(KEYS)
        self.server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--api-keys", keys] +
                                    SERVER_FLAGS)

    def tearDown(self):
        self.server.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def metric(self, name, labels):
        """The value of one series, labels in Prometheus' (sorted) order; 0 when absent."""
        value = self.server.metric(name + "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}")
        return value or 0

    def mean_wait(self, tenant):
        labels = (("tenant", tenant),)
        count = self.metric("rpt_tenant_queue_duration_seconds_count", labels)
        self.assertGreater(count, 0, tenant)
        return self.metric("rpt_tenant_queue_duration_seconds_sum", labels) / count

    def test_only_the_flooder_is_refused_and_the_light_tenant_does_not_wait_behind_it(self):
        stop = threading.Event()
        flood_codes = []
        refusals = set()  # their messages, numbers left out, and Retry-After headers
        lock = threading.Lock()

        def flood():
            while not stop.is_set():
                status, headers, body = self.server.translate(FLOOD_CALL, bearer(FLOOD),
                                                              timeout=120)
                with lock:
                    flood_codes.append(status)
                    if status == 429:
                        refusals.add((body["error"]["message"].split(":")[0],
                                      headers.get("Retry-After")))
                if status == 429:
                    time.sleep(0.02)  # a client backing off, not a spin on a shared machine

        flooders = [threading.Thread(target=flood) for _ in range(FLOODERS)]
        for thread in flooders:
            thread.start()
        try:
            self.assertTrue(self.server.wait_for_metric(
                'rpt_queue_depth_sentences{model="en-de"}', lambda depth: depth >= 6, 60))
            light_codes = []
            for _ in range(LIGHT_CALLS):
                status, _, body = self.server.translate(LIGHT_CALL, bearer(LIGHT), timeout=120)
                light_codes.append(status)
                self.assertEqual(status, 200, body)
            # Four sentences at once: within the light tenant's half of the full queue. While
            # they wait for rows, the flooder is past its half.
            status, _, body = self.server.translate(dict(LIGHT_CALL, texts=[TEXT] * 4),
                                                    bearer(LIGHT), timeout=120)
            self.assertEqual(status, 200, body)
        finally:
            stop.set()
            for thread in flooders:
                thread.join()

        self.assertEqual(light_codes, [200] * LIGHT_CALLS)
        self.assertEqual(set(flood_codes) - {200, 429}, set(), flood_codes)
        self.assertIn(429, flood_codes)
        refused = {bound: self.metric("rpt_tenant_queue_refusals_total",
                                      (("bound", bound), ("tenant", "flood")))
                   for bound in ("queue", "share")}
        self.assertEqual(sum(refused.values()), flood_codes.count(429))
        self.assertGreater(refused["share"], 0)
        self.assertEqual(refusals, {("model 'en-de' is overloaded", "1"),
                                    ("tenant flood is over its share of the queue of model "
                                     "'en-de' while other tenants wait", "1")})
        for bound in ("queue", "share"):
            self.assertEqual(self.metric("rpt_tenant_queue_refusals_total",
                                         (("bound", bound), ("tenant", "light"))), 0)
        self.assertEqual(self.metric("rpt_tenant_queue_duration_seconds_count",
                                     (("tenant", "light"),)), LIGHT_CALLS + 4)
        # First come first served, each light sentence would wait for the flood's queue ahead of
        # it; shared fairly, it waits for a row to free up.
        self.assertLess(self.mean_wait("light"), self.mean_wait("flood"))


if __name__ == "__main__":
    unittest.main()
