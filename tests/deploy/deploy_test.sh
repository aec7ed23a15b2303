#!/usr/bin/env bash
# The deployment files are valid: Prometheus rules and configuration (promtool), the Grafana
# dashboard (JSON, and every query names an rpt metric the server exports), the Kubernetes
# manifests (the Kubernetes 1.37 OpenAPI schemas, strictly, offline; and the rules of
# docs/kubernetes.md: restricted security context, drain timing, threads, balancing, scaling),
# and the autoscaler's prometheus-adapter query, evaluated by promtool.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
deploy="$repo/deploy"
promtool check rules "$deploy/prometheus/rules.yml"
promtool check config --syntax-only "$deploy/prometheus/prometheus.yml"
validator="$repo/.venv/bin/kubernetes-validate"  # pinned in tools/test-requirements.txt
if [ ! -x "$validator" ]; then
  echo "FAIL $validator is missing: run bash tools/setup.sh" >&2
  exit 1
fi
"$validator" --strict --kubernetes-version 1.37.0 "$deploy"/kubernetes/*.yaml
/usr/bin/python3 - "$repo" <<'PY'
import json, re, subprocess, sys, tempfile, yaml
repo = sys.argv[1]
deploy, metrics_source = f"{repo}/deploy", f"{repo}/server/metrics.cc"
exported = set(re.findall(r'"(rpt_[a-z_]+)"', open(metrics_source).read()))
dashboard = json.load(open(f"{deploy}/grafana/rpt-dashboard.json"))
for panel in dashboard["panels"]:
    for target in panel.get("targets", []):  # a row has none
        used = {re.sub(r"_(bucket|count|sum)$", "", m) for m in re.findall(r"rpt_[a-z_]+", target["expr"])}
        unknown = used - exported
        assert not unknown, f"dashboard panel {panel['title']!r} uses unknown metrics {unknown}"
documents = [d for d in yaml.safe_load_all(open(f"{deploy}/kubernetes/rpt.yaml")) if d]
kinds = [d["kind"] for d in documents]
assert {"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"} <= set(kinds)
by_kind = lambda kind: [d for d in documents if d["kind"] == kind]
pod = by_kind("Deployment")[0]["spec"]["template"]["spec"]
container = next(c for c in pod["containers"] if c["name"] == "rpt-server")

# The image's build context (.dockerignore, an allowlist) holds every folder the build stage's
# cmake configures: a new layer folder left off it breaks only the image build, late in CI.
context = {l.strip()[1:].rstrip("/") for l in open(f"{repo}/.dockerignore") if l.startswith("!")}
configured = set(re.findall(r"^add_subdirectory\((\w+)\)$", open(f"{repo}/CMakeLists.txt").read(), re.M))
missing = configured - {"tests", "bench"} - context
assert not missing, f".dockerignore leaves out folders CMakeLists.txt configures: {sorted(missing)}"

# The restricted Pod Security Standard, with the image's numeric USER.
user = next(l.split()[1] for l in open(f"{repo}/Dockerfile") if l.startswith("USER "))
assert re.fullmatch(r"[0-9]+(:[0-9]+)?", user), f"Dockerfile USER {user} is not numeric"
security = pod["securityContext"]
assert security["runAsNonRoot"] and security["runAsUser"] == int(user.split(":")[0]) != 0
assert security["seccompProfile"]["type"] == "RuntimeDefault"
assert container["securityContext"] == {"allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}, container["securityContext"]
image = container["image"]
assert ":" in image and not image.endswith(":latest") and container["imagePullPolicy"], image

# Drain: the preStop sleep, then --grace-period for in-flight calls, fit the termination grace.
args = dict(a.lstrip("-").split("=", 1) for a in container["args"] if "=" in a)
pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
grace = float(args["grace-period"])
assert pod["terminationGracePeriodSeconds"] > pre_stop + grace, "termination grace too short"

# CPU threads from the CPU request (downward API), not every core of the node.
threads = re.fullmatch(r"\$\((\w+)\)", args["threads"]).group(1)
field = next(e for e in container["env"] if e["name"] == threads)["valueFrom"]["resourceFieldRef"]
assert field["resource"] == "requests.cpu" and "cpu" in container["resources"]["requests"]

# Availability and balancing.
pdb = by_kind("PodDisruptionBudget")[0]["spec"]
assert pdb.get("maxUnavailable") == 1 and "minAvailable" not in pdb, pdb
assert any(t["topologyKey"] == "kubernetes.io/hostname" for t in pod["topologySpreadConstraints"])
headless = [s for s in by_kind("Service") if s["spec"].get("clusterIP") == "None"]
assert any(p["name"] == "grpc" for s in headless for p in s["spec"]["ports"]), "no headless gRPC"

# Scaling: scale-down stabilisation; every HPA metric served by a prometheus-adapter rule on a
# metric the server exports, selected by the namespace label prometheus.yml adds.
hpa = by_kind("HorizontalPodAutoscaler")[0]["spec"]
assert hpa["behavior"]["scaleDown"]["stabilizationWindowSeconds"] >= 60
adapter_map = yaml.safe_load(open(f"{deploy}/kubernetes/prometheus-adapter.yaml"))
adapter = yaml.safe_load(adapter_map["data"]["config.yaml"])
served = {r["name"]["as"]: r for r in adapter.get("externalRules", []) + adapter.get("rules", [])}
external_rules = []
for metric in hpa["metrics"]:
    name = metric[metric["type"].lower()]["metric"]["name"]
    rule = served.get(name)
    assert rule, f"HPA metric {name} has no prometheus-adapter rule"
    series = re.match(r"[a-z_]+", rule["seriesQuery"]).group(0)
    assert series in exported, f"adapter rule reads {series}, which rpt-server does not export"
    for label in rule["resources"]["overrides"]:
        assert f"target_label: {label}" in open(f"{deploy}/prometheus/prometheus.yml").read(), label
    external_rules.append(rule)

# prometheus.yml labels the scraped series with the namespace of the Service's DNS name, and the
# adapter's query, as the adapter renders it for the HPA's namespace, sums that namespace's
# replicas and models (evaluated by promtool on synthetic series).
scrape = yaml.safe_load(open(f"{deploy}/prometheus/prometheus.yml"))["scrape_configs"][0]
relabel = next(r for r in scrape["relabel_configs"] if r["target_label"] == "namespace")
dns_name = scrape["dns_sd_configs"][0]["names"][0]
assert re.fullmatch(relabel["regex"], dns_name).group(1) == "default", dns_name
for rule in external_rules:
    series = re.match(r"[a-z_]+", rule["seriesQuery"]).group(0)
    query = (rule["metricsQuery"].replace("<<.Series>>", series)
             .replace("<<.LabelMatchers>>", 'namespace="default"').replace("<<.GroupBy>>", ""))
    replicas = [("default", "rpt-a", "en-de", 10), ("default", "rpt-a", "en-fr", 5),
                ("default", "rpt-b", "en-de", 20), ("staging", "rpt-c", "en-de", 100)]
    case = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": f'{series}{{namespace="{n}",pod="{p}",model="{m}"}}',
                          "values": f"{v}x5"} for n, p, m, v in replicas],
        "promql_expr_test": [{"expr": query, "eval_time": "2m",
                              "exp_samples": [{"labels": "{}", "value": 35}]}]}]}
    with tempfile.TemporaryDirectory() as directory:
        path = f"{directory}/adapter_test.yml"
        yaml.safe_dump(case, open(path, "w"))
        run = subprocess.run(["promtool", "test", "rules", path], capture_output=True, text=True)
        assert run.returncode == 0, f"adapter query {query}: {run.stdout}{run.stderr}"
print(f"deploy files valid: {len(dashboard['panels'])} dashboard panels, manifests {kinds}")
PY
