#!/usr/bin/env python3
"""CTranslate2 4.x (PyPI) on a GPU machine that has cuBLAS 13 only.

CTranslate2's wheels link CUDA's runtime statically and load cuBLAS at run time:
dlopen("libcublas.so.12"), then dlsym of each cuBLAS function they call, by name (4.8.5: nine,
all of the v2 API — cublasCreate_v2, cublasGemmEx, cublasGemmStridedBatchedEx, ...). cuBLAS 13
exports the same names with the same C signatures, so a link named libcublas.so.12 pointing at
libcublas.so.13 serves them; CTranslate2 logs the version it loaded (CT2_VERBOSE=1: "Loaded
cuBLAS library version 13...").

This makes that link (and one for libcublasLt.so.13, which cuBLAS finds through $ORIGIN) in a
folder of its own, to put first on LD_LIBRARY_PATH, and checks before anything runs that every
cuBLAS name the CTranslate2 library holds resolves when "libcublas.so.12" is opened by name the
way CTranslate2 opens it. Prints a JSON report; exit status 1 when a name is missing.

    python3 tools/cublas12_link.py --ctranslate2-lib .../ctranslate2.libs/libctranslate2-*.so.4.8.5 \\
        --cublas .../libcublas.so.13 --out /tmp/cublas12
    export LD_LIBRARY_PATH=/tmp/cublas12:$LD_LIBRARY_PATH
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# A cuBLAS function name as a C string of its own inside the library's read-only data.
CUBLAS_NAME = re.compile(rb"(?<=\x00)(cublas[A-Za-z0-9_]+)\x00")

# Run in a child whose LD_LIBRARY_PATH starts with the link folder (the dynamic loader reads it
# once, at start): opens the library by name, as CTranslate2 does, and looks each name up.
RESOLVE = """import ctypes, json, sys
library = ctypes.CDLL(sys.argv[1])
print(json.dumps([name for name in sys.argv[2:] if not hasattr(library, name)]))"""


def cublas_names(library_path):
    """Every cuBLAS function name the (CTranslate2) library holds, sorted."""
    data = Path(library_path).read_bytes()
    return sorted({match.decode() for match in CUBLAS_NAME.findall(data)})


def make_links(cublas_path, out_dir):
    """out_dir/libcublas.so.12 -> cuBLAS 13, out_dir/libcublasLt.so.13 -> its Lt beside it."""
    given = Path(cublas_path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    links = {"libcublas.so.12": given.resolve()}
    # Named as cuBLAS asks for it (libcublasLt.so.13), whatever file a toolkit's link resolves to.
    lt = given.parent / re.sub(r"^libcublas\.", "libcublasLt.", given.name)
    if lt.exists():
        links[lt.name] = lt.resolve()
    for name, target in links.items():
        link = out / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return out / "libcublas.so.12"


def missing_names(link_dir, names, soname="libcublas.so.12"):
    """The names that do not resolve when `soname` is opened by name from link_dir first."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(link_dir), env.get("LD_LIBRARY_PATH", "")) if p)
    child = subprocess.run([sys.executable, "-S", "-c", RESOLVE, soname, *names], env=env,
                           capture_output=True, text=True)
    if child.returncode != 0:
        raise RuntimeError(f"cannot open {soname} from {link_dir}: {child.stderr.strip()}")
    return json.loads(child.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ctranslate2-lib", required=True,
                        help="CTranslate2's shared library (ctranslate2.libs/libctranslate2-*)")
    parser.add_argument("--cublas", required=True, help="libcublas.so.13 to serve as .so.12")
    parser.add_argument("--out", required=True, help="folder for the links")
    args = parser.parse_args(argv)
    names = cublas_names(args.ctranslate2_lib)
    link = make_links(args.cublas, args.out)
    report = {"link": str(link), "cublas": str(Path(args.cublas).resolve()), "names": names}
    try:
        report["missing"] = missing_names(args.out, names)
    except RuntimeError as error:
        report["error"] = str(error)
    print(json.dumps(report, indent=1))
    ok = names and not report.get("missing", True) and "error" not in report
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
