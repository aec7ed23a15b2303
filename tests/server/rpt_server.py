"""Test support for the HTTP tests: the real rpt-server on loopback (free ports, --ready-file),
HTTP calls through Python's http.client, gRPC calls through python3-grpcio with the message
classes client/python/translate_client.py generates.

The binary comes from the RPT_SERVER_BINARY environment variable (tests/server/CMakeLists.txt).
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURE_MODEL = os.path.join(REPO, "tests", "fixtures", "shaw_k4", "model")
sys.path.insert(0, os.path.join(REPO, "client", "python"))


def server_binary():
    binary = os.environ.get("RPT_SERVER_BINARY")
    if not binary:
        raise RuntimeError("set RPT_SERVER_BINARY to the rpt-server binary")
    return binary


def model_arguments(models):
    """rpt-server's --model flags for {name: directory}."""
    return [argument for name, path in models.items() for argument in ("--model", f"{name}={path}")]


def http_call(port, method, path, body=None, headers=None, context=None, timeout=60):
    """One HTTP call to 127.0.0.1:`port` (HTTPS with an ssl `context`); (status, headers, body)."""
    connection = (http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=timeout)
                  if context else http.client.HTTPConnection("127.0.0.1", port, timeout=timeout))
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


class ServerProcess:
    """rpt-server with `arguments` on 127.0.0.1 (any free ports); killed when closed."""

    def __init__(self, arguments):
        self.directory = tempfile.mkdtemp(prefix="rpt_http_test_")
        ready = os.path.join(self.directory, "ready.json")
        self.log_path = os.path.join(self.directory, "server.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [server_binary(), "--listen", "127.0.0.1:0", "--metrics-port", "0",
                 "--ready-file", ready] + list(arguments),
                stdout=log, stderr=subprocess.STDOUT)
        give_up = time.monotonic() + 60
        while not os.path.exists(ready):
            if self.process.poll() is not None:
                raise RuntimeError("rpt-server exited at start:\n" + self.log())
            if time.monotonic() > give_up:
                raise RuntimeError("rpt-server did not become ready:\n" + self.log())
            time.sleep(0.02)
        with open(ready) as f:
            ports = json.load(f)
        self.grpc_port = ports["grpc_port"]
        self.http_port = ports["metrics_port"]
        self.public_port = ports.get("http_port")  # with --http-listen

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)

    def signal(self, number=signal.SIGTERM):
        self.process.send_signal(number)

    def wait_exit(self, timeout):
        return self.process.wait(timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=60):
        """One HTTP call; returns (status, headers dict, body bytes)."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        return http_call(self.http_port, method, path, body, headers, timeout=timeout)

    def translate(self, body, headers=None, timeout=60):
        """POST /v1/translate; returns (status, headers, parsed JSON body)."""
        status, response_headers, data = self.request("POST", "/v1/translate", body, headers,
                                                      timeout)
        return status, response_headers, json.loads(data)

    def metric(self, sample):
        """The value of `sample` (name{labels} as exposed) on /metrics, or None."""
        _, _, data = self.request("GET", "/metrics")
        for line in data.decode().splitlines():
            if line.startswith(sample + " "):
                return float(line.split(" ")[1])
        return None

    def wait_for_metric(self, sample, predicate, seconds=20):
        give_up = time.monotonic() + seconds
        while time.monotonic() < give_up:
            value = self.metric(sample)
            if value is not None and predicate(value):
                return True
            time.sleep(0.01)
        return False


class GrpcTranslator:
    """Translate and ListModels over gRPC by method path (no grpc_python_plugin needed)."""

    def __init__(self, port):
        import grpc
        import translate_client

        self.grpc = grpc
        self.pb = translate_client.load_messages()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self._translate = self.channel.unary_unary(
            "/rpt.v1.Translator/Translate",
            request_serializer=self.pb.TranslateRequest.SerializeToString,
            response_deserializer=self.pb.TranslateResponse.FromString)

        self._translate_raw = self.channel.unary_unary(
            "/rpt.v1.Translator/Translate", request_serializer=lambda raw: raw,
            response_deserializer=self.pb.TranslateResponse.FromString)
        self._list_models = self.channel.unary_unary(
            "/rpt.v1.Translator/ListModels",
            request_serializer=self.pb.ListModelsRequest.SerializeToString,
            response_deserializer=self.pb.ListModelsResponse.FromString)

    def request(self, model, texts, glossary=(), glossary_name="", **options):
        """A TranslateRequest; `glossary` holds (source, target) pairs."""
        return self.pb.TranslateRequest(
            model=self.pb.ModelSelector(model=model), texts=[t.encode() for t in texts],
            options=self.pb.DecodingOptions(**options),
            glossary=[self.pb.GlossaryEntry(source=s, target=t) for s, t in glossary],
            glossary_name=glossary_name)

    def translate(self, model, texts, timeout=60, glossary=(), glossary_name="", **options):
        request = self.request(model, texts, glossary, glossary_name, **options)
        return self._translate(request, timeout=timeout)

    def translate_raw(self, serialized, timeout=60):
        """Translate with a request's bytes as given (e.g. invalid UTF-8 in a string field)."""
        return self._translate_raw(serialized, timeout=timeout)

    def list_models(self, timeout=60):
        return self._list_models(self.pb.ListModelsRequest(), timeout=timeout)

    def close(self):
        self.channel.close()
