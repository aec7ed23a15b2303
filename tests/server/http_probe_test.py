"""Slow clients cannot delay the probes: 200 connections held open on rpt-server's HTTP port
(100 silent, 100 trickling a byte of an unfinished request every 200 ms) while /healthz is polled;
every probe must be answered within 100 ms, and /v1/translate and gRPC Translate keep working.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/http_probe_test.py
"""
import http.client
import socket
import threading
import time
import unittest

from rpt_server import FIXTURE_MODEL, GrpcTranslator, ServerProcess

SILENT = 100
TRICKLING = 100
PROBES = 60
PROBE_LIMIT_SECONDS = 0.1


class SlowClientsTest(unittest.TestCase):
    def setUp(self):
        self.server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}"])
        self.stop = threading.Event()
        self.sockets = []

    def tearDown(self):
        self.stop.set()
        for s in self.sockets:
            s.close()
        self.server.close()

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.server.http_port))
        self.sockets.append(s)
        return s

    def trickle(self, connections):
        request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        position = 0
        while not self.stop.wait(0.2):
            for s in connections:
                try:
                    s.send(request[position:position + 1] or b"a")
                except OSError:
                    pass  # closed by the server: also fine for the probes
            position += 1

    def probe(self):
        """GET /healthz on a fresh connection: (status, seconds from connect to the answer)."""
        start = time.monotonic()
        connection = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=5)
        try:
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            response.read()
            return response.status, time.monotonic() - start
        finally:
            connection.close()

    def test_probes_stay_fast_with_200_slow_connections(self):
        for _ in range(SILENT):
            self.connect()
        trickling = [self.connect() for _ in range(TRICKLING)]
        trickler = threading.Thread(target=self.trickle, args=(trickling,))
        trickler.start()
        time.sleep(0.5)  # every connection accepted and some bytes trickled
        try:
            timings = []
            for _ in range(PROBES):
                status, seconds = self.probe()
                self.assertEqual(status, 200)
                timings.append(seconds)
                time.sleep(0.05)
            slowest = max(timings)
            print(f"{PROBES} /healthz probes beside {SILENT + TRICKLING} slow connections: "
                  f"median {sorted(timings)[len(timings) // 2] * 1e3:.2f} ms, "
                  f"slowest {slowest * 1e3:.2f} ms")
            self.assertLess(slowest, PROBE_LIMIT_SECONDS)

            # The slow connections are still open (none was dropped to make room), and the
            # translation APIs of both protocols answer beside them.
            status, _, body = self.server.translate({"model": "en-de", "texts": ["Cancel"]})
            self.assertEqual(status, 200, body)
            grpc_client = GrpcTranslator(self.server.grpc_port)
            try:
                answer = grpc_client.translate("en-de", ["Cancel"])
            finally:
                grpc_client.close()
            self.assertEqual(answer.translations[0].hypotheses[0].text,
                             body["translations"][0]["hypotheses"][0]["text"])
            self.assertEqual(self.probe()[0], 200)
        finally:
            self.stop.set()
            trickler.join()


if __name__ == "__main__":
    unittest.main(verbosity=2)
