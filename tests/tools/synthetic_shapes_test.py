"""bench/synthetic_shapes.py's dry run on the CPU (a tiny shape): the bench GPU sessions run at
base, big and 1 B shapes must not rot between them. Checks that the random model loads in both
engines, that both decode exactly the fixed length (the token counts the figures divide by), and
that the JSON and the plot are written; and bench/load_time.py's dry run on its models. Skips
visibly without ctranslate2, torch or rpt-translate.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RPT_TRANSLATE = os.environ.get("RPT_TRANSLATE") or os.path.join(REPO, "build", "cli",
                                                                  "rpt-translate")
try:
    import ctranslate2  # noqa: F401
    import matplotlib  # noqa: F401
    import torch  # noqa: F401
    MISSING = None
except ImportError as e:  # pragma: no cover - depends on the machine
    MISSING = f"ctranslate2, torch and matplotlib (tools/setup.sh) are needed ({e})"
    print(f"synthetic_shapes_test: SKIPPED: {MISSING}", file=sys.stderr)


@unittest.skipIf(MISSING, MISSING or "")
@unittest.skipUnless(os.path.exists(RPT_TRANSLATE), f"no {RPT_TRANSLATE}: build first")
class SyntheticShapesDryRun(unittest.TestCase):
    def test_tiny_shape_on_the_cpu(self):
        with tempfile.TemporaryDirectory() as temp:
            out, png = os.path.join(temp, "out.json"), os.path.join(temp, "plot.png")
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "synthetic_shapes.py"),
                            "--device", "cpu", "--shapes", "tiny", "--batches", "1,4",
                            "--precisions", "float32,int8", "--lines", "12",
                            "--batch1-lines", "3", "--fixed-length", "7", "--repeat", "2",
                            "--gpu-attention", "key-split,lane-groups", "--inter", "1,2",
                            "--profile",
                            "--rpt-translate", RPT_TRANSLATE, "--work", temp,
                            "--json", out, "--plot", png],
                           check=True, capture_output=True, text=True, timeout=300)
            results = json.load(open(out))
            self.assertEqual(results["skipped"], [])
            self.assertEqual([(p["precision"], p["batch"]) for p in results["points"]],
                             [("float32", 1), ("float32", 4), ("int8", 1), ("int8", 4)])
            for point in results["points"]:
                expected = point["sentences"] * 7
                self.assertEqual(point["sentences"], 3 if point["batch"] == 1 else 12)
                for engine in ("rpt", "ctranslate2"):
                    self.assertEqual(point[engine]["tokens"], expected, (engine, point["batch"]))
                    self.assertEqual(len(point[engine]["runs"]), 2)
                    # Batch 1 runs one decoder / replica; above it both layouts were timed and
                    # the figure is the faster one's.
                    layouts = point[engine]["layouts"]
                    self.assertEqual(list(layouts), ["1"] if point["batch"] == 1 else ["1", "2"])
                    self.assertEqual(layouts[str(point[engine]["inter"])], min(layouts.values()))
                    self.assertGreater(point[engine]["tokens_per_s"], 0)
                self.assertAlmostEqual(point["ratio"], point["rpt"]["tokens_per_s"]
                                       / point["ctranslate2"]["tokens_per_s"])
                # One rpt figure per attention kernel (the same flags on the CPU), the first
                # one the point's.
                kernels = point["rpt_kernels"]
                self.assertEqual(list(kernels), ["key-split", "lane-groups"])
                self.assertEqual(point["rpt"], kernels["key-split"])
                for kernel in kernels.values():
                    self.assertEqual(kernel["tokens"], expected)
                    self.assertEqual(len(kernel["runs"]), 2)
            batched = results["points"][1]["rpt"]
            self.assertGreater(batched["split"]["steps"], 0)
            self.assertGreater(os.path.getsize(png), 1000)
            # The plot redraws from the JSON alone (what docs/ figures are made from).
            os.remove(png)
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "synthetic_shapes.py"),
                            "--plot-only", out, "--plot", png], check=True, timeout=120)
            self.assertGreater(os.path.getsize(png), 1000)

    def test_load_time_tiny_shape_warm_and_cold(self):
        """bench/load_time.py, which writes its models with this bench's write_model: both
        engines load warm and cold, and rpt's phases come from rpt-translate --verbose's load
        line (a change of its wording would otherwise go unnoticed)."""
        with tempfile.TemporaryDirectory() as temp:
            out = os.path.join(temp, "out.json")
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "load_time.py"),
                            "--shapes", "tiny", "--compute-types", "float32,int8",
                            "--threads", "1,2", "--repeat", "2", "--cold",
                            "--rpt-translate", RPT_TRANSLATE, "--before", RPT_TRANSLATE,
                            "--work", temp, "--json", out],
                           check=True, capture_output=True, text=True, timeout=300)
            results = json.load(open(out))
            self.assertEqual(
                [(p["compute_type"], p["threads"], p["cache"]) for p in results["points"]],
                [(c, t, cache) for c in ("float32", "int8") for t in (1, 2)
                 for cache in ("warm", "cold")])
            for point in results["points"]:
                int8_file = ["rpt int8 file"] if point["compute_type"] == "int8" else []
                self.assertEqual(list(point["engines"]),
                                 ["rpt", *int8_file, "rpt before", "CTranslate2"])
                for engine, figures in point["engines"].items():
                    self.assertEqual(len(figures["runs"]), 2, engine)
                    self.assertGreater(figures["process_s"], figures["ready_s"], engine)
                    self.assertGreater(figures["ready_s"], 0, engine)
                    self.assertGreater(figures["rss_mib"], 0, engine)
                phases = point["engines"]["rpt"]["phases"]
                self.assertEqual(list(phases), ["map", "checksum", "convert", "quantize", "pack",
                                                "other"])
                if point["compute_type"] == "float32":
                    self.assertEqual(phases["quantize"], 0.0)
                else:  # rpt on the same weights stored in int8, its phases reported too
                    self.assertEqual(list(point["engines"]["rpt int8 file"]["phases"]),
                                     list(phases))


if __name__ == "__main__":
    unittest.main()
