#!/usr/bin/env bash
# The deployment files are valid: Prometheus rules and configuration (promtool), the Grafana
# dashboard (JSON, and every query names an rpt metric the server exports), the Kubernetes
# manifests (YAML documents with kind and metadata).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
deploy="$repo/deploy"
promtool check rules "$deploy/prometheus/rules.yml"
promtool check config --syntax-only "$deploy/prometheus/prometheus.yml"
/usr/bin/python3 - "$deploy" "$repo/server/metrics.cc" <<'PY'
import json, re, sys, yaml
deploy, metrics_source = sys.argv[1], sys.argv[2]
exported = set(re.findall(r'"(rpt_[a-z_]+)"', open(metrics_source).read()))
dashboard = json.load(open(f"{deploy}/grafana/rpt-dashboard.json"))
for panel in dashboard["panels"]:
    for target in panel["targets"]:
        used = {re.sub(r"_(bucket|count|sum)$", "", m) for m in re.findall(r"rpt_[a-z_]+", target["expr"])}
        unknown = used - exported
        assert not unknown, f"dashboard panel {panel['title']!r} uses unknown metrics {unknown}"
documents = [d for d in yaml.safe_load_all(open(f"{deploy}/kubernetes/rpt.yaml")) if d]
kinds = [d["kind"] for d in documents]
assert all("metadata" in d for d in documents), "a manifest lacks metadata"
assert {"Deployment", "Service"} <= set(kinds), kinds
print(f"deploy files valid: {len(dashboard['panels'])} dashboard panels, manifests {kinds}")
PY
