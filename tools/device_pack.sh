#!/usr/bin/env bash
# Packs what a GPU machine without Debian packages needs to run rpt's CUDA tests and GPU
# benchmarks (bench/gpu_checks.sh): the built binaries, the shared libraries they load that are
# neither the C/C++ runtime nor CUDA's (the GPU machine has its own), the demo models and the
# test split of the data.
#
#   tools/device_pack.sh BUILD_DIR OUT_DIR [DATA_DIR]
#
# OUT_DIR.tar.xz is what to carry (about 12 MB, 30 MB with a slimmed model; the unpacked folder
# is over the device tool's 64 MiB working-tree limit, oneDNN alone is 40 MB). Put it in a
# git-ignored folder of the repository, name that folder in the run's carry list, and on the GPU
# machine, from the repository root: tar -xJf PACK.tar.xz -C /tmp && bash bench/gpu_checks.sh
# /tmp/PACK. With both bundled models tracked the tree alone is ~61 MiB: `tools/device_slim.sh on`
# first (and `off` after the last device call, before committing); the model it untracks is
# packed here. For example (.device/ is git-ignored):
#   tools/device_slim.sh on && tools/device_pack.sh build .device/pack && rm -rf .device/pack
#   device run, carry [".device"]:  tar -xJf .device/pack.tar.xz -C /tmp && \
#     OUT=$OUT bash bench/gpu_checks.sh /tmp/pack all
# CTranslate2 on the same GPU (gpu_checks.sh phase peer) needs a call of its own, the tree slimmed
# as above and the pack without models (~25 MB):
#   RPT_PACK_PEER=1 RPT_PACK_MODELS=0 tools/device_pack.sh build .device/peer && rm -rf .device/peer
#   device run, carry [".device/peer.tar.xz"]:  tar -xJf .device/peer.tar.xz -C /tmp && \
#     OUT=$OUT bash bench/gpu_checks.sh /tmp/peer machine peer
set -euo pipefail
BUILD="${1:?usage: device_pack.sh BUILD_DIR OUT_DIR [DATA_DIR]}"
OUT="${2:?usage: device_pack.sh BUILD_DIR OUT_DIR [DATA_DIR]}"
DATA="${3:-$(dirname "$0")/../../shared/data}"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/data"

# The CUDA engine is a plugin the binaries dlopen from ../lib (engine/cuda_plugin.h): ldd does not
# list it, so it is packed by name, with the libraries it loads.
BINARIES=(cli/rpt-translate tests/cuda_ops_test tests/cuda_engine_test
          tests/golden_test tests/engine_test tests/kernels_test bench/relative_cost_bench
          lib/librpt_cuda.so ${RPT_PACK_EXTRA:-})  # e.g. RPT_PACK_EXTRA=server/rpt-server
for binary in "${BINARIES[@]}"; do
  [ -f "$BUILD/$binary" ] || { echo "missing $BUILD/$binary (build with -DRPT_WITH_CUDA=ON)" >&2; exit 1; }
  case "$binary" in
    lib/*) cp "$BUILD/$binary" "$OUT/lib/" ;;
    *) cp "$BUILD/$binary" "$OUT/bin/" ;;
  esac
  ldd "$BUILD/$binary" | awk '$3 ~ /^\// {print $3}' | while read -r library; do
    case "$(basename "$library")" in
      libc.so*|libm.so*|libmvec.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*|ld-linux*) ;;
      libcuda*|libcublas*|libcudart*) ;;  # the GPU machine's CUDA
      *) cp -L "$library" "$OUT/lib/" ;;
    esac
  done
done
# ICU's data library (31 MB, 7.5 MB compressed: collation, conversion and break rules): the
# character properties rpt uses (engine/glossary.cc, spans/) are compiled into libicuuc; the
# sentence break rules and language names are data, so on the pack lines are not cut into
# sentences (documents/segmenter.cc falls back to one segment per line; the GPU checks compare
# line by line) and /languages names a language by its code. A stub defining only its data
# symbol keeps the pack within the device's carry limit (checked: glossary_test passes against
# it).
for data in "$OUT"/lib/libicudata.so.*; do
  [ -e "$data" ] || continue
  symbol=$(nm -D "$OUT"/lib/libicuuc.so.* | awk '$1 == "U" && $2 ~ /^icudt[0-9]+_dat$/ {s = $2} END {print s}')
  [ -n "$symbol" ] || { echo "device_pack: no ICU data symbol in libicuuc" >&2; exit 1; }
  printf 'const unsigned char %s[64] __attribute__((aligned(16))) = {0};\n' "$symbol" |
    cc -shared -fPIC -x c -o "$data" -Wl,-soname,"$(basename "$data")" -
done
for pair in en-de en-fr; do
  [ -f "$DATA/ui.$pair.test.tsv" ] && cp "$DATA/ui.$pair.test.tsv" "$OUT/data/"
done
# A bundled model the tree does not send (tools/device_slim.sh on) travels in the pack, unless
# RPT_PACK_MODELS=0 (room for RPT_PACK_EXTRA).
repo="$(cd "$(dirname "$0")/.." && pwd)"
for model in "$repo"/models/*/; do
  [ "${RPT_PACK_MODELS:-1}" = 0 ] && break
  if ! git -C "$repo" ls-files --error-unmatch "${model#"$repo/"}model.bin" > /dev/null 2>&1; then
    mkdir -p "$OUT/models"
    cp -r "${model%/}" "$OUT/models/"
  fi
done
# CTranslate2 for gpu_checks.sh's peer phase (RPT_PACK_PEER=1): the PyPI wheel for the GPU
# machine's Python (RPT_PEER_PYTHON, 3.12 there), unpacked, its shared objects stripped (149 ->
# 76 MB, ~14 MB compressed). It loads cuBLAS 12 by name; the peer phase serves that from cuBLAS 13
# (tools/cublas12_link.py). The wheel is kept in a cache outside the carried folder.
if [ "${RPT_PACK_PEER:-0}" = 1 ]; then
  peer_version=${RPT_PEER_VERSION:-4.8.5} peer_python=${RPT_PEER_PYTHON:-3.12}
  wheels="${XDG_CACHE_HOME:-$HOME/.cache}/rpt-peer-wheels"
  mkdir -p "$wheels" "$OUT/peer/site"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$peer_python" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$wheels" \
    "ctranslate2==$peer_version"
  tag="cp${peer_python/./}"
  wheel=$(ls "$wheels"/ctranslate2-"$peer_version"-"$tag"-*.whl | head -1)
  python3 -m zipfile -e "$wheel" "$OUT/peer/site"
  find "$OUT/peer/site" -name '*.so*' -type f -exec strip --strip-unneeded {} +
  echo "ctranslate2 $peer_version for Python $peer_python ($(basename "$wheel"))" > "$OUT/peer/VERSION"
fi
XZ_OPT="-9 -T2" tar -cJf "$OUT.tar.xz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
du -sh "$OUT" "$OUT.tar.xz"
