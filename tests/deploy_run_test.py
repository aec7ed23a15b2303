#!/usr/bin/env python3
"""deploy/kubernetes/rpt.yaml runs as Kubernetes would run it.

    deploy_run_test.py RPT_SERVER_BINARY GRPC_PROTO_DIR

Builds the container's command line the way the kubelet does: the Dockerfile's ENTRYPOINT (or
the container's `command`) followed by the Deployment's `args`, with $(VAR) references expanded
from the container's env (downward-API resource fields computed from its resources). Only the
image's paths are substituted: /opt/rpt/bin/rpt-server by the built binary, /opt/rpt/models by the
repository's models. rpt-server started with exactly that argv must serve: every probe the
manifest declares passes (gRPC health on the gRPC port, or HTTP GET), and so do grpc.health.v1
Check, /healthz and /readyz on the metrics port. Runs in a private network namespace (unshare),
so the manifest's fixed ports are free even where other servers run, and there, when the
container's root filesystem is read-only, rpt-server runs with / remounted read-only. Without a
namespace (a container that forbids it) it uses the host's ports, leaves / writable and says so.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import grpc
import yaml
from google.protobuf import descriptor_pb2, message_factory

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
IN_NAMESPACE = "RPT_DEPLOY_TEST_IN_NETNS"
START_TIMEOUT_SECONDS = 120


def enter_private_network():
    """Re-executes this script in a new user and network namespace with loopback up."""
    if os.environ.get(IN_NAMESPACE):
        print("in a private network namespace")
        return
    if shutil.which("unshare") is None:
        print("no unshare: using the host's ports")
        return
    namespace = ["unshare", "--user", "--map-root-user", "--net"]
    probe = subprocess.run(namespace + ["ip", "link", "set", "lo", "up"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        print(f"no private network namespace ({probe.stderr.strip()}): using the host's ports")
        return
    os.environ[IN_NAMESPACE] = "1"
    script = 'ip link set lo up && exec "$@"'
    os.execvp("unshare", namespace + ["sh", "-c", script, "sh", sys.executable, *sys.argv])


def read_only_root(argv, container):
    """`argv` run with / remounted read-only when the container asks for a read-only root (in a
    mount namespace of its own, so the test itself may still write)."""
    if not container.get("securityContext", {}).get("readOnlyRootFilesystem"):
        return argv
    if not os.environ.get(IN_NAMESPACE):
        print("read-only root filesystem not checked: no namespace")
        return argv
    print("with / read-only, as readOnlyRootFilesystem asks")
    return ["unshare", "--mount", "sh", "-c", 'mount -o remount,bind,ro / && exec "$@"', "sh",
            *argv]


def container_spec(manifest_path):
    documents = [d for d in yaml.safe_load_all(open(manifest_path)) if d]
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    return pod, next(c for c in pod["containers"] if c["name"] == "rpt-server")


def dockerfile_instruction(dockerfile_path, name):
    """The exec-form (JSON array) value of the last `name` instruction."""
    values = [line[len(name):].strip() for line in open(dockerfile_path)
              if line.startswith(name + " ")]
    assert values, f"the Dockerfile has no {name}"
    return json.loads(values[-1])


def parse_quantity(text):
    """A Kubernetes resource quantity ("2", "500m", "1.5", "2Gi") as a number."""
    suffixes = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(text))
    assert match and match.group(2) in suffixes.keys() | {""}, f"bad quantity {text!r}"
    return float(match.group(1)) * suffixes.get(match.group(2), 1)


def environment(container):
    """The container's env as the kubelet sets it (values and downward-API resource fields)."""
    values = {}
    for variable in container.get("env", []):
        if "value" in variable:
            values[variable["name"]] = str(variable["value"])
            continue
        field = variable["valueFrom"]["resourceFieldRef"]
        kind, resource = field["resource"].split(".")  # requests.cpu, limits.memory, ...
        amount = parse_quantity(container["resources"][kind][resource])
        # The kubelet rounds resource fields up to whole divisors (1 CPU by default).
        values[variable["name"]] = str(math.ceil(amount / parse_quantity(field.get("divisor", 1))))
    return values


def expand(argument, env):
    """Kubernetes' $(VAR) expansion in command and args ($$ escapes; unknown names stay)."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)),
                  argument)


def container_argv(dockerfile_path, container, server_binary):
    command = container.get("command") or dockerfile_instruction(dockerfile_path, "ENTRYPOINT")
    args = container["args"] if "args" in container else dockerfile_instruction(dockerfile_path,
                                                                                 "CMD")
    env = environment(container)
    image_paths = {"/opt/rpt/bin/rpt-server": server_binary,
                   "/opt/rpt/models": os.path.join(REPO, "models")}
    argv = []
    for argument in command + args:
        argument = expand(argument, env)
        for image_path, local_path in image_paths.items():
            argument = argument.replace(image_path, local_path)
        assert "/opt/rpt" not in argument, f"no local path for {argument}"
        argv.append(argument)
    return argv


def health_messages(grpc_proto_dir):
    """grpc.health.v1's message classes, built from the .proto at run time."""
    with tempfile.TemporaryDirectory() as directory:
        descriptors = os.path.join(directory, "health.desc")
        subprocess.run(["protoc", "-I", grpc_proto_dir, f"--descriptor_set_out={descriptors}",
                        "grpc/health/v1/health.proto"], check=True)
        files = descriptor_pb2.FileDescriptorSet.FromString(open(descriptors, "rb").read()).file
    classes = message_factory.GetMessages(files)
    return (classes["grpc.health.v1.HealthCheckRequest"],
            classes["grpc.health.v1.HealthCheckResponse"])


class Probes:
    """The checks a kubelet (and an operator) makes against one pod on 127.0.0.1."""

    def __init__(self, grpc_proto_dir, ports):
        self.request, self.response = health_messages(grpc_proto_dir)
        self.ports = ports  # container port names -> numbers

    def port(self, port):
        return self.ports[port] if isinstance(port, str) else port

    def grpc_serving(self, port, service=""):
        with grpc.insecure_channel(f"127.0.0.1:{self.port(port)}") as channel:
            check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                        request_serializer=self.request.SerializeToString,
                                        response_deserializer=self.response.FromString)
            try:
                reply = check(self.request(service=service), timeout=2)
            except grpc.RpcError:
                return False
            return reply.status == self.response.SERVING

    def http_ok(self, port, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port(port)}{path}",
                                        timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, ConnectionError):
            return False

    def probe(self, spec):
        if "grpc" in spec:
            return self.grpc_serving(spec["grpc"]["port"], spec["grpc"].get("service", ""))
        if "httpGet" in spec:
            return self.http_ok(spec["httpGet"]["port"], spec["httpGet"].get("path", "/"))
        raise AssertionError(f"probe kind not checked by this test: {spec}")


def main():
    server_binary, grpc_proto_dir = sys.argv[1:3]
    enter_private_network()
    pod, container = container_spec(os.path.join(REPO, "deploy/kubernetes/rpt.yaml"))
    argv = container_argv(os.path.join(REPO, "Dockerfile"), container, server_binary)
    print("rpt-server argv:", " ".join(argv))
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    probes = Probes(grpc_proto_dir, ports)
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(read_only_root(argv, container), stdout=log,
                                  stderr=subprocess.STDOUT)
        try:
            give_up = time.monotonic() + START_TIMEOUT_SECONDS
            while not probes.grpc_serving("grpc"):
                if server.poll() is not None or time.monotonic() > give_up:
                    log.seek(0)
                    sys.exit(f"FAIL rpt-server did not serve (exit status {server.poll()}):\n"
                             + log.read())
                time.sleep(0.2)
            failures = []
            checks = {f"{kind} {spec}": spec for kind in
                      ("startupProbe", "readinessProbe", "livenessProbe")
                      if (spec := container.get(kind))}
            checks["grpc.health.v1 Check on port grpc"] = {"grpc": {"port": "grpc"}}
            checks["GET /healthz on port metrics"] = {"httpGet": {"port": "metrics",
                                                                  "path": "/healthz"}}
            checks["GET /readyz on port metrics"] = {"httpGet": {"port": "metrics",
                                                                 "path": "/readyz"}}
            for name, spec in checks.items():
                passed = probes.probe(spec)
                print(("ok   " if passed else "FAIL ") + name)
                if not passed:
                    failures.append(name)
        finally:
            server.terminate()
            status = server.wait(timeout=60)
    if status != 0:
        failures.append(f"exit status {status} after SIGTERM, not 0")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print(f"the manifest's rpt-server serves; {len(checks)} probes pass")


if __name__ == "__main__":
    main()
