#!/usr/bin/env python3
"""`podman kube play` of deploy/kubernetes/rpt.yaml's Deployment: the manifest as Kubernetes
would run it, as far as podman 4.3 (Debian 12) goes. deploy/image/test.sh runs it after building
the image the Deployment names.

    kube_play_test.py --proto-dir GRPC_PROTO_DIR

podman plays the Deployment's pod spec (image, args, env from resourceFieldRef, ports, user,
security context) but differs from a kubelet on a few fields; the manifest copy it plays is
changed where it must be, and the test checks the rest itself:
- replicas -> 1: podman publishes every containerPort on the host, so a second replica on one
  host cannot bind its ports.
- $(VAR) in args: podman 4.3 passes them literally (rpt-server then refuses
  `--threads=$(RPT_THREADS)`), so they are expanded here as the kubelet expands them.
- gRPC probes: podman turns only exec, httpGet and tcpSocket probes into health checks, so this
  test makes each probe itself, on its schedule: liveness when initialDelaySeconds is over,
  readiness at its first periodSeconds.
- lifecycle.preStop, topologySpreadConstraints, resources.requests: not applied by podman;
  the Services, PodDisruptionBudget and HorizontalPodAutoscaler are not played.
Checked in the running container: user 65534 (runAsUser), no capabilities, no_new_privs, a
read-only root filesystem; the probes; each model over gRPC and JSON; /metrics; then
`podman pod stop` with terminationGracePeriodSeconds drains to exit status 0.
"""
import argparse
import copy
import os
import subprocess
import sys
import tempfile
import time

import yaml

from deploy_run_test import REPO, Probes, environment, expand, loaded_models

MANIFEST = os.path.join(REPO, "deploy", "kubernetes", "rpt.yaml")


def podman(*args, check=True):
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check).stdout


def playable(deployment):
    """The Deployment as podman 4.3 can play it (the module docstring says why each change)."""
    played = copy.deepcopy(deployment)
    played["spec"]["replicas"] = 1
    for container in played["spec"]["template"]["spec"]["containers"]:
        env = environment(container)
        container["args"] = [expand(a, env) for a in container.get("args", [])]
    return played


def process_status(container_name):
    """/proc/1/status of the container's rpt-server, as fields."""
    text = podman("exec", container_name, "cat", "/proc/1/status")
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proto-dir", required=True, help="grpc/health/v1/health.proto's root")
    options = parser.parse_args()
    deployment = next(d for d in yaml.safe_load_all(open(MANIFEST))
                      if d and d["kind"] == "Deployment")
    played = playable(deployment)
    pod = played["spec"]["template"]["spec"]
    container = next(c for c in pod["containers"] if c["name"] == "rpt-server")
    name = f"{played['metadata']['name']}-pod-0"
    container_name = f"{name}-{container['name']}"
    ports = {}
    for port in container["ports"]:  # published on the host under their own numbers
        ports[port["name"]] = ports[port["containerPort"]] = port["containerPort"]
    probes = Probes(options.proto_dir, ports)
    failures = []

    def check(passed, what):
        print(("ok   " if passed else "FAIL ") + what)
        if not passed:
            failures.append(what)

    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as manifest:
        yaml.safe_dump(played, manifest)
        manifest.flush()
        podman("pod", "rm", "--force", "--ignore", name)
        started = time.monotonic()
        podman("kube", "play", manifest.name)
        try:
            readiness = container.get("readinessProbe", {})
            liveness = container.get("livenessProbe", {})
            ready_by = started + readiness.get("initialDelaySeconds", 0) + \
                readiness.get("periodSeconds", 10) * readiness.get("failureThreshold", 3)
            while not probes.probe(readiness) and time.monotonic() < ready_by:
                time.sleep(0.2)
            check(probes.probe(readiness),
                  f"readinessProbe passes within {ready_by - started:.0f} s "
                  f"(took {time.monotonic() - started:.1f} s)")
            time.sleep(max(0.0, started + liveness.get("initialDelaySeconds", 0)
                           - time.monotonic()))
            check(probes.probe(liveness), "livenessProbe passes once initialDelaySeconds is over")
            for path in ("/healthz", "/readyz"):
                check(probes.http_ok("metrics", path), f"GET {path}")
            status = process_status(container_name)
            security = {**pod.get("securityContext", {}), **container.get("securityContext", {})}
            check(status["Uid"].split()[0] == str(security["runAsUser"]),
                  f"runs as user {security['runAsUser']} (Uid: {status['Uid']})")
            check(int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0,
                  f"no capabilities (CapEff {status['CapEff']}, CapBnd {status['CapBnd']})")
            check(status["NoNewPrivs"].strip() == "1", "no_new_privs")
            writable = subprocess.run(["podman", "exec", container_name, "touch", "/opt/rpt/x"],
                                      capture_output=True, text=True)
            check(writable.returncode != 0 and "Read-only" in writable.stderr,
                  "the root filesystem is read-only")
            for model in loaded_models(container["args"]):
                problem = probes.translations_agree(model)
                check(problem is None, f"{model} over gRPC and JSON {problem or ''}")
            check(probes.metrics_count(loaded_models(container["args"])) is None,
                  "/metrics counts the calls")
        finally:
            grace = pod.get("terminationGracePeriodSeconds", 30)
            stopping = time.monotonic()
            podman("pod", "stop", "--time", str(grace), name)
            code = podman("inspect", "--format", "{{.State.ExitCode}}", container_name).strip()
            seconds = time.monotonic() - stopping
            if failures or code != "0":
                print(podman("logs", container_name, check=False)[-4000:])
            podman("pod", "rm", "--force", name)
    check(code == "0", f"`podman pod stop --time {grace}`: exit status {code} in {seconds:.1f} s")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("podman kube play: the Deployment's pod serves and drains")


if __name__ == "__main__":
    main()
