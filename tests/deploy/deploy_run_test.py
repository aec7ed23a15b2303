#!/usr/bin/env python3
"""deploy/kubernetes/rpt.yaml runs as Kubernetes would run it: from the build tree, or the image.

    deploy_run_test.py --proto-dir GRPC_PROTO_DIR --binary RPT_SERVER_BINARY
    deploy_run_test.py --proto-dir GRPC_PROTO_DIR --image IMAGE      (podman; deploy/image/test.sh)

Builds the container's command line the way the kubelet does: the Dockerfile's ENTRYPOINT (or
the container's `command`) followed by the Deployment's `args`, with $(VAR) references expanded
from the container's env (downward-API resource fields computed from its resources).

--binary: only the image's paths are substituted (/opt/rpt/bin/rpt-server by the built binary,
/opt/rpt/models by the repository's models). Runs in a private network namespace (unshare), so
the manifest's fixed ports are free even where other servers run, and there, when the container's
root filesystem is read-only, rpt-server runs with / remounted read-only. Without a namespace (a
container that forbids it) it uses the host's ports, leaves / writable and says so.

--image: `podman run` of the image with the container's args, env, user, security context
(--read-only, --cap-drop=ALL, no-new-privileges) and memory limit, its ports published on
127.0.0.1; first checks that every /opt/rpt path the ENTRYPOINT, command or args name is in the
image and that every binary there resolves its libraries; stops it with `podman stop` and the
pod's terminationGracePeriodSeconds.

Either way rpt-server must serve: every probe the manifest declares passes (gRPC health on the
gRPC port, or HTTP GET), and so do grpc.health.v1 Check, /healthz and /readyz on the metrics port;
each model the args load translates over gRPC and over the JSON API, the same text both ways;
/metrics counts those calls; SIGTERM drains and rpt-server exits 0.
"""
import argparse
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import grpc
import yaml
from google.protobuf import descriptor_pb2, message_factory

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "server"))
from rpt_server import GrpcTranslator  # noqa: E402  (tests/server/rpt_server.py)

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


def container_argv(dockerfile_path, container):
    """(command, args) as the kubelet runs them, $(VAR) expanded: command is the container's own
    or the image's ENTRYPOINT, args the container's or the image's CMD."""
    command = container.get("command") or dockerfile_instruction(dockerfile_path, "ENTRYPOINT")
    args = container["args"] if "args" in container else dockerfile_instruction(dockerfile_path,
                                                                                 "CMD")
    env = environment(container)
    return [expand(a, env) for a in command], [expand(a, env) for a in args]


def local_argv(argv, server_binary):
    """`argv` with the image's paths replaced by the build tree's binary and the repo's models."""
    image_paths = {"/opt/rpt/bin/rpt-server": server_binary,
                   "/opt/rpt/models": os.path.join(REPO, "models")}
    local = []
    for argument in argv:
        for image_path, local_path in image_paths.items():
            argument = argument.replace(image_path, local_path)
        assert "/opt/rpt" not in argument, f"no local path for {argument}"
        local.append(argument)
    return local


def image_paths(argv):
    """The /opt/rpt paths an argv names (--model=NAME=PATH, --flag=PATH or a bare PATH)."""
    return sorted({m.group(0) for a in argv for m in re.finditer(r"/opt/rpt/[^\s=,]+", a)})


def loaded_models(args):
    """The model names the args load (--model NAME=PATH or --model=NAME=PATH)."""
    names = []
    for i, argument in enumerate(args):
        value = (argument.split("=", 1)[1] if argument.startswith("--model=")
                 else args[i + 1] if argument == "--model" else None)
        if value and "=" in value:
            names.append(value.split("=", 1)[0])
    return names


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

    def __init__(self, grpc_proto_dir, host_ports):
        self.request, self.response = health_messages(grpc_proto_dir)
        self.host_ports = host_ports  # container port names and numbers -> ports on 127.0.0.1

    def port(self, port):
        return self.host_ports[port]

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

    def http_get(self, port, path):
        """(status, body) of GET `path`; status None when nothing answers."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port(port)}{path}",
                                        timeout=2) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except (urllib.error.URLError, ConnectionError):
            return None, ""

    def http_ok(self, port, path):
        return self.http_get(port, path)[0] == 200

    def probe(self, spec):
        if "grpc" in spec:
            return self.grpc_serving(spec["grpc"]["port"], spec["grpc"].get("service", ""))
        if "httpGet" in spec:
            return self.http_ok(spec["httpGet"]["port"], spec["httpGet"].get("path", "/"))
        raise AssertionError(f"probe kind not checked by this test: {spec}")

    def translations_agree(self, model):
        """One text translated over gRPC and over the JSON API: the same non-empty text, or why
        not."""
        text = "Open the file and save it."
        translator = GrpcTranslator(self.port("grpc"))
        try:
            over_grpc = translator.translate(model, [text]).translations[0].hypotheses[0].text
        except grpc.RpcError as error:
            return f"gRPC: {error.code()} {error.details()}"
        finally:
            translator.close()
        body = json.dumps({"model": model, "texts": [text]}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port('metrics')}/v1/translate", data=body,
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                over_json = json.load(reply)["translations"][0]["hypotheses"][0]["text"]
        except urllib.error.URLError as error:
            return f"JSON: {error}"
        print(f"     {model}: {text!r} -> {over_grpc!r}")
        if not over_grpc:
            return "an empty translation"
        return None if over_json == over_grpc else f"JSON {over_json!r} != gRPC {over_grpc!r}"

    def metrics_count(self, models):
        """/metrics is served and counts the OK calls of each model; an error text or None."""
        status, text = self.http_get("metrics", "/metrics")
        if status != 200:
            return f"GET /metrics: {status}"
        for model in models:
            pattern = rf'^rpt_requests_total{{[^}}]*model="{re.escape(model)}"[^}}]*}} ([0-9.e+]+)$'
            counts = [float(m.group(1)) for m in re.finditer(pattern, text, re.MULTILINE)]
            if sum(counts) < 2:
                return f"rpt_requests_total for {model}: {counts}, want 2 calls or more"
        return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalPod:
    """The build tree's rpt-server with the container's argv (image paths replaced)."""

    def __init__(self, argv, container, server_binary):
        self.argv = read_only_root(local_argv(argv, server_binary), container)
        self.log = tempfile.TemporaryFile("w+")
        self.host_ports = {}
        for port in container["ports"]:  # the namespace's loopback: the manifest's own ports
            self.host_ports[port["name"]] = self.host_ports[port["containerPort"]] = \
                port["containerPort"]

    def start(self):
        print("rpt-server argv:", " ".join(self.argv))
        self.process = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT)

    def exited(self):
        return self.process.poll() is not None

    def stop(self, grace_seconds):
        """SIGTERM, then the exit status (None if it outlived the grace period)."""
        self.process.terminate()
        try:
            return self.process.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None

    def output(self):
        self.log.seek(0)
        return self.log.read()


class PodmanPod:
    """The image run by podman the way the kubelet runs the container (args, env, user, security
    context, memory limit), its ports published on 127.0.0.1."""

    def __init__(self, image, pod, container):
        self.image = image
        self.name = f"rpt-deploy-test-{os.getpid()}"
        self.host_ports = {}
        options = ["--name", self.name, "--detach"]
        for port in container["ports"]:
            host = free_port()
            self.host_ports[port["name"]] = self.host_ports[port["containerPort"]] = host
            options += ["--publish", f"127.0.0.1:{host}:{port['containerPort']}"]
        for name, value in environment(container).items():
            options += ["--env", f"{name}={value}"]
        security = {**pod.get("securityContext", {}), **container.get("securityContext", {})}
        if "runAsUser" in security:
            options += ["--user", f"{security['runAsUser']}:{security.get('runAsGroup', 0)}"]
        if security.get("readOnlyRootFilesystem"):
            options.append("--read-only")
        for capability in security.get("capabilities", {}).get("drop", []):
            options.append(f"--cap-drop={capability}")
        if security.get("allowPrivilegeEscalation") is False:
            options += ["--security-opt", "no-new-privileges"]
        memory = container.get("resources", {}).get("limits", {}).get("memory")
        if memory:
            options.append(f"--memory={int(parse_quantity(memory))}")
        command, args = container_argv(os.path.join(REPO, "Dockerfile"), container)
        if container.get("command"):
            options += ["--entrypoint", json.dumps(command)]
        self.argv = ["podman", "run"] + options + [image] + args

    def start(self):
        print("podman:", " ".join(self.argv))
        subprocess.run(self.argv, check=True, stdout=subprocess.DEVNULL)

    def exited(self):
        state = subprocess.run(["podman", "inspect", "--format", "{{.State.Status}}", self.name],
                               capture_output=True, text=True)
        return state.stdout.strip() in ("exited", "stopped", "")

    def stop(self, grace_seconds):
        """`podman stop` (SIGTERM, SIGKILL after the grace period), then the exit status (None
        if it had to be killed)."""
        subprocess.run(["podman", "stop", "--time", str(grace_seconds), self.name], check=True,
                       stdout=subprocess.DEVNULL)
        code = subprocess.run(["podman", "inspect", "--format", "{{.State.ExitCode}}", self.name],
                              capture_output=True, text=True, check=True).stdout.strip()
        return None if code == "137" else int(code)

    def output(self):
        return subprocess.run(["podman", "logs", self.name], capture_output=True,
                              text=True).stdout

    def remove(self):
        subprocess.run(["podman", "rm", "--force", "--ignore", self.name],
                       stdout=subprocess.DEVNULL)


def image_content_failures(image, argv):
    """What the image lacks: a path the command line names, a library a binary loads."""
    paths = image_paths(argv)
    script = ('for p in "$@"; do [ -e "$p" ] || echo "missing $p"; done; '
              'ldd /opt/rpt/bin/* | grep "not found" | sed "s/^/unresolved /"; true')
    found = subprocess.run(["podman", "run", "--rm", "--entrypoint", "/bin/sh", image, "-c",
                            script, "sh"] + paths, capture_output=True, text=True, check=True)
    print(f"ok   the image holds {', '.join(paths)}" if not found.stdout else found.stdout)
    return found.stdout.split("\n")[:-1] if found.stdout else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proto-dir", required=True, help="grpc/health/v1/health.proto's root")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--binary", help="the build tree's rpt-server")
    where.add_argument("--image", help="the image to run with podman")
    options = parser.parse_args()
    if options.binary:
        enter_private_network()
    pod, container = container_spec(os.path.join(REPO, "deploy/kubernetes/rpt.yaml"))
    command, args = container_argv(os.path.join(REPO, "Dockerfile"), container)
    grace = pod.get("terminationGracePeriodSeconds", 30)
    failures = []
    if options.image:
        failures += image_content_failures(options.image, command + args)
        if failures:
            sys.exit(f"FAIL the image cannot run the Deployment: {failures}")
        server = PodmanPod(options.image, pod, container)
    else:
        server = LocalPod(command + args, container, options.binary)
    probes = Probes(options.proto_dir, server.host_ports)
    server.start()
    try:
        give_up = time.monotonic() + START_TIMEOUT_SECONDS
        while not probes.grpc_serving("grpc"):
            if server.exited() or time.monotonic() > give_up:
                sys.exit(f"FAIL rpt-server did not serve:\n{server.output()}")
            time.sleep(0.2)
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
        models = loaded_models(args)
        if not models:
            failures.append("the args load no model")
        for model in models:
            problem = probes.translations_agree(model)
            print(("ok   " if not problem else f"FAIL ({problem}) ") +
                  f"{model} over gRPC and JSON")
            if problem:
                failures.append(f"{model}: {problem}")
        problem = probes.metrics_count(models)
        print(("ok   " if not problem else f"FAIL ({problem}) ") + "/metrics counts the calls")
        if problem:
            failures.append(problem)
    finally:
        started = time.monotonic()
        status = server.stop(grace)
        print(f"stopped in {time.monotonic() - started:.1f} s, exit status {status}")
        if failures or status != 0:
            print(server.output()[-4000:])
        if isinstance(server, PodmanPod):
            server.remove()
    if status != 0:
        failures.append(f"exit status {status} after SIGTERM, not 0 within {grace} s")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed: {failures}")
    print(f"the manifest's rpt-server serves ({'image ' + options.image if options.image else 'build tree'}): "
          f"{len(checks)} probes, {len(models)} models over gRPC and JSON, /metrics, drain")


if __name__ == "__main__":
    main()
