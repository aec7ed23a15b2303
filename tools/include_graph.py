#!/usr/bin/env python3
"""The include graph of rpt's C++ folders: which folder includes which, checked against the layers
of docs/ARCHITECTURE.md (dependencies point one way, down) and drawn as a picture.

  tools/include_graph.py --check              exit 1 naming every include that breaks a layer
  tools/include_graph.py --plot docs/include_graph.png

Counts only includes that name a file of the repository ("engine/model.h"), by the folder of the
including file (engine/cpu and engine/cuda apart from engine, kernels/cpu and kernels/cuda apart
from kernels).
"""
import argparse
import collections
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ("*.h", "*.cc", "*.cu", "*.cuh")
FOLDERS = ("common", "spans", "documents", "kernels", "kernels/cpu", "kernels/cuda", "engine",
           "engine/cpu", "engine/cuda", "flags", "server", "client", "cli")
# What each folder may include (besides itself). Files listed by path: one header, not the folder.
ALLOWED = {
    "common": set(),
    "spans": set(),
    "documents": {"spans", "common"},
    "kernels": set(),
    "kernels/cpu": {"kernels"},
    "kernels/cuda": {"kernels"},
    "engine": {"engine/cpu/cpu_engine.h", "kernels", "spans", "common", "documents"},
    "engine/cpu": {"engine", "kernels"},
    "engine/cuda": {"engine", "kernels", "kernels/cuda"},
    "flags": {"engine", "documents", "kernels"},
    "server": {"engine", "flags", "proto", "spans", "documents", "common",
               "kernels/cpu_kernels.h", "kernels/parallel.h"},
    "client": {"proto", "common"},
    "cli": {"engine", "flags", "kernels", "spans", "documents", "common"},
}
# Where each folder sits in the picture (x, y): callers above what they call.
POSITIONS = {
    "client": (0.0, 3.0), "server": (1.4, 3.0), "cli": (2.8, 3.0), "proto": (0.0, 2.0),
    "engine": (1.4, 2.0), "engine/cuda": (2.8, 1.5), "flags": (2.1, 2.5),
    "engine/cpu": (0.3, 1.5), "spans": (3.9, 2.0),
    "documents": (3.9, 1.0), "common": (0.0, 1.0),
    "kernels": (1.4, 1.0), "kernels/cpu": (0.7, 0.0), "kernels/cuda": (2.6, 0.0),
}
# Generated at build time: includes of these folders count though no such file is in the tree.
GENERATED = ("proto/",)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def folder_of(path):
    return str(path.parent.relative_to(REPO))


def includes():
    """(including folder, included repository path) for every include of a repository file."""
    for folder in FOLDERS:
        for pattern in SOURCES:
            for path in sorted((REPO / folder).glob(pattern)):
                for target in INCLUDE.findall(path.read_text(encoding="utf-8")):
                    if (REPO / target).is_file() or target.startswith(GENERATED):
                        yield path.relative_to(REPO), folder, target


def allowed(folder, target):
    target_folder = str(pathlib.PurePosixPath(target).parent)
    rules = ALLOWED[folder]
    return target_folder == folder or target_folder in rules or target in rules


def edges():
    counts = collections.Counter()
    for _, folder, target in includes():
        target_folder = str(pathlib.PurePosixPath(target).parent)
        if target_folder != folder:
            counts[(folder, target_folder)] += 1
    return counts


def check():
    broken = [(path, target) for path, folder, target in includes()
              if not allowed(folder, target)]
    for path, target in broken:
        print(f"{path}: includes {target}, against the layers of docs/ARCHITECTURE.md")
    counts = edges()
    print(f"{sum(counts.values())} includes across {len(counts)} folder pairs; "
          f"{len(broken)} against the layers")
    return 1 if broken else 0


def plot(output):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = edges()
    figure, axes = plt.subplots(figsize=(8.5, 4.8), dpi=100)
    for (source, target), count in sorted(counts.items()):
        if source not in POSITIONS or target not in POSITIONS:
            continue
        (x0, y0), (x1, y1) = POSITIONS[source], POSITIONS[target]
        axes.annotate("", xy=(x1, y1), xytext=(x0, y0),
                      arrowprops=dict(arrowstyle="-|>", color="#4c72b0", lw=0.8 + count / 12,
                                      shrinkA=22, shrinkB=22, connectionstyle="arc3,rad=0.08"))
        axes.text((x0 + x1) / 2, (y0 + y1) / 2, str(count), fontsize=8, color="#4c72b0",
                  ha="center", va="center", bbox=dict(fc="white", ec="none", pad=0.5))
    for name, (x, y) in POSITIONS.items():
        axes.text(x, y, name, ha="center", va="center", fontsize=10,
                  bbox=dict(boxstyle="round,pad=0.4", fc="#f2f2f2", ec="#555555"))
    axes.set_xlim(-0.6, 4.5)
    axes.set_ylim(-0.5, 3.5)
    axes.axis("off")
    axes.set_title("rpt: includes between folders (arrow: includes; number: #include lines)",
                   fontsize=10)
    figure.tight_layout()
    figure.savefig(output)
    print(f"wrote {output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--plot", metavar="PNG")
    args = parser.parse_args()
    status = check() if args.check or not args.plot else 0
    if args.plot:
        plot(args.plot)
    return status


if __name__ == "__main__":
    sys.exit(main())
