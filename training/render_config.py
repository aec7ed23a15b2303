#!/usr/bin/env python3
"""Render config/PAIR.yaml into a run's OpenNMT-py config: fill in {data} and {run}, apply a
position variant and KEY=VALUE overrides (values parsed as YAML: 3000, 2.0, true, [0]).

    render_config.py config/en-de.yaml --variant relative --data D --run R [--set k=v ...]
"""
import argparse
import sys

import yaml

# The paper's Table 1 in miniature: same model, only the position information differs.
VARIANTS = {
    # Shaw et al.: relative keys/values clipped at k = 16, no absolute encodings.
    "relative": {"position_encoding": False, "max_relative_positions": 16},
    # Vaswani et al. baseline: sinusoidal absolute encodings (embeddings scaled by sqrt(d)).
    "sinusoidal": {"position_encoding": True, "max_relative_positions": 0},
    # Ablation: no position information at all (k = 0).
    "k0": {"position_encoding": False, "max_relative_positions": 0},
}


def fill(node, subs):
    if isinstance(node, dict):
        return {k: fill(v, subs) for k, v in node.items()}
    if isinstance(node, list):
        return [fill(v, subs) for v in node]
    if isinstance(node, str):
        for k, v in subs.items():
            node = node.replace("{" + k + "}", v)
    return node


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("config")
    ap.add_argument("--variant", default="relative", choices=sorted(VARIANTS))
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    with open(args.config, encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    cfg = fill(cfg, {"data": args.data, "run": args.run})
    cfg.update(VARIANTS[args.variant])
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            sys.exit(f"--set expects KEY=VALUE, got {item!r}")
        cfg[key] = yaml.safe_load(value)
    yaml.safe_dump(cfg, sys.stdout, sort_keys=False, allow_unicode=True)


if __name__ == "__main__":
    main()
