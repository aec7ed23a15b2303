"""tools/cublas12_link.py: CTranslate2's cuBLAS 12 names served by cuBLAS 13 through a link.

    python3 -m unittest tests/tools/cublas12_link_test.py -v

Uses the installed CTranslate2 (tools/setup.sh; the same libctranslate2 as the wheel the GPU
pack carries) and the CUDA 13 toolkit's libcublas.so.13; without either the tests skip visibly.
No GPU is needed: the check is that the dynamic loader finds every name by the path CTranslate2
takes (dlopen of "libcublas.so.12" by name, then dlsym).
"""

import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import cublas12_link  # noqa: E402


def ctranslate2_library():
    spec = importlib.util.find_spec("ctranslate2")
    if spec is None or not spec.origin:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    found = sorted(glob.glob(os.path.join(site, "ctranslate2.libs", "libctranslate2*.so*")))
    return found[0] if found else None


def cublas13():
    found = sorted(glob.glob("/usr/local/cuda*/lib*/libcublas.so.13"))
    return found[0] if found else None


LIBRARY, CUBLAS = ctranslate2_library(), cublas13()
MISSING = None if LIBRARY and CUBLAS else (
    f"needs CTranslate2's library (found: {LIBRARY}) and CUDA 13's libcublas.so.13 "
    f"(found: {CUBLAS})")
if MISSING:  # pragma: no cover - depends on the machine
    print(f"cublas12_link_test: SKIPPED: {MISSING}", file=sys.stderr)


def run_tool(cublas, out):
    child = subprocess.run([sys.executable, os.path.join(REPO, "tools", "cublas12_link.py"),
                            "--ctranslate2-lib", LIBRARY, "--cublas", cublas, "--out", out],
                           capture_output=True, text=True)
    return child.returncode, json.loads(child.stdout)


@unittest.skipIf(MISSING, MISSING)
class Cublas12LinkTest(unittest.TestCase):
    def test_names_are_the_functions_ctranslate2_calls(self):
        names = cublas12_link.cublas_names(LIBRARY)
        for name in ("cublasCreate_v2", "cublasSetStream_v2", "cublasGemmEx",
                     "cublasGemmStridedBatchedEx", "cublasSgemm_v2"):
            self.assertIn(name, names)
        self.assertTrue(all(name.startswith("cublas") and name.isidentifier() for name in names))

    def test_every_name_resolves_in_cublas_13_through_the_link(self):
        with tempfile.TemporaryDirectory() as out:
            code, report = run_tool(CUBLAS, out)
            self.assertEqual(report["missing"], [])
            self.assertEqual(code, 0)
            link = os.path.join(out, "libcublas.so.12")
            self.assertEqual(os.path.realpath(link), os.path.realpath(CUBLAS))
            self.assertTrue(os.path.exists(os.path.join(out, "libcublasLt.so.13")))

    def test_a_toolkit_whose_sonames_link_to_versioned_files(self):
        # libcublas.so.13 -> libcublas.so.13.9.9 (a toolkit's layout): the Lt link is still
        # named as cuBLAS asks for it, libcublasLt.so.13.
        real = os.path.realpath(CUBLAS)
        real_lt = os.path.join(os.path.dirname(real), "libcublasLt.so.13")
        with tempfile.TemporaryDirectory() as toolkit, tempfile.TemporaryDirectory() as out:
            for name, target in (("libcublas", real), ("libcublasLt", os.path.realpath(real_lt))):
                os.symlink(target, os.path.join(toolkit, f"{name}.so.13.9.9"))
                os.symlink(f"{name}.so.13.9.9", os.path.join(toolkit, f"{name}.so.13"))
            code, report = run_tool(os.path.join(toolkit, "libcublas.so.13"), out)
            self.assertEqual((code, report["missing"]), (0, []))
            self.assertEqual(sorted(os.listdir(out)), ["libcublas.so.12", "libcublasLt.so.13"])

    def test_a_library_without_them_is_refused(self):
        libz = sorted(glob.glob("/lib/x86_64-linux-gnu/libz.so.1") +
                      glob.glob("/usr/lib/x86_64-linux-gnu/libz.so.1"))
        if not libz:
            self.skipTest("no libz.so.1 to stand in for a wrong library")
        with tempfile.TemporaryDirectory() as out:
            code, report = run_tool(libz[0], out)
            self.assertEqual(code, 1)
            self.assertIn("cublasGemmEx", report["missing"])

    def test_a_second_run_replaces_the_links(self):
        with tempfile.TemporaryDirectory() as out:
            self.assertEqual(run_tool(CUBLAS, out)[0], 0)
            self.assertEqual(run_tool(CUBLAS, out)[0], 0)


if __name__ == "__main__":
    unittest.main()
