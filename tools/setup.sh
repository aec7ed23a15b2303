#!/usr/bin/env bash
# Installs every system dependency of rpt from Debian packages, and the Python test tools PyPI
# alone has: kubernetes-validate (pinned in tools/test-requirements.txt) into the repository's
# .venv, CTranslate2 and sacrebleu beside Debian's python3 (below). Idempotent and
# non-interactive: what is already present is skipped, so a second run does nothing.
# RPT_SETUP_TEST_TOOLS=0 installs only what building rpt needs (the Dockerfile's build stage);
# RPT_SETUP_ONLY="PACKAGE ..." only those Debian packages (.ci/run's format stage: clang-format).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

# What building rpt needs (the Dockerfile's build stage installs only these).
build_packages=(
  build-essential cmake ninja-build pkg-config
  ccache                  # cmake/RptCcache.cmake: rebuilds; the image build reuses host objects
  protobuf-compiler libprotobuf-dev libgrpc++-dev protobuf-compiler-grpc
  golang-google-grpc-dev  # gRPC health and reflection .proto files (CMake generates C++ from them)
  libsentencepiece-dev
  prometheus-cpp-dev libcivetweb-dev
  libspdlog-dev libfmt-dev
  libblis-serial-dev
  libdnnl-dev             # oneDNN: int8 GEMMs on the CPU
  libcli11-dev nlohmann-json3-dev
  libicu-dev              # Unicode case folding, word and sentence boundaries (glossaries, segmentation)
  libxml2-dev             # HTML and XML documents (documents/markup_document.h)
  libmd4c-dev             # Markdown pairs and blocks, read by md4c (spans/span_markdown.cc)
  libgettextpo-dev        # gettext PO catalogues read and written by gettext itself (po_catalog.cc)
  libmicrohttpd-dev       # the HTTP port: probes, /metrics and the JSON API
  libcurl4-openssl-dev    # rpt-loadgen --protocol http (libcurl's multi interface)
  libcld2-dev             # language identification: source auto, /detect (server/language_detection.h)
  libyaml-cpp-dev         # the --api-keys file (server/api_keys.h)
  libssl-dev              # libcrypto: API keys kept as SHA-256 digests (gRPC's TLS needs it too)
)
# What the tests, benchmarks and the image test add.
test_packages=(
  git
  openssl                 # the TLS server tests make a throwaway certificate
  sentencepiece
  libopenblas-dev         # bench/gemm_bench compares BLIS with OpenBLAS
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev  # libFuzzer and sanitizers for -DRPT_BUILD_FUZZERS=ON (tests/fuzz/)
  clang-format            # tools/check_format.sh (CI's format stage)
  python3 python3-numpy python3-yaml python3-grpcio python3-protobuf python3-torch
  python3-pip python3-sentencepiece  # the CTranslate2 comparison (below) and its test
  python3-regex python3-tabulate python3-portalocker python3-lxml python3-colorama  # sacrebleu's
  python3-requests        # the deepl client's
  python3-matplotlib      # bench/ plots; tests/tools/synthetic_shapes_test.py draws one
  python3-jsonpatch       # tests/deploy/tenants_patch_test.py applies the Kubernetes patch
  python3-tqdm python3-filelock python3-fsspec python3-packaging python3-typing-extensions
                          # transformers' and huggingface_hub's (tests/tools/convert_hf_t5_test.py)
  # tests/server/web_ui_test.py drives the page for browsers in headless Chromium; selenium's
  # dependencies (pinned below, --no-deps): urllib3 with SOCKS, trio, trio-websocket, certifi
  chromium chromium-driver
  python3-urllib3 python3-socks python3-trio python3-trio-websocket python3-certifi
  prometheus curl
  libxml2-utils           # xmllint: the XLIFF tests check what rpt writes is well-formed
  gettext                 # msgfmt --check, msgcat, msginit: the PO tests check rpt's catalogues with them
  python3-venv            # the .venv for PyPI-only test tools (below)
  iproute2 util-linux     # deploy_run_test: a private network namespace with the manifest's ports
  bsdutils                # script(1): the progress-line tests run a command on a pseudo-terminal
  # deploy/image/test.sh: builds the Dockerfile on a debootstrapped base and runs the image
  podman buildah runc containernetworking-plugins iptables catatonit debootstrap
)
# RPT_SETUP_TEST_TOOLS=0: the build packages only (and no Python test tools, below).
packages=("${build_packages[@]}")
[ "${RPT_SETUP_TEST_TOOLS:-1}" = 0 ] || packages+=("${test_packages[@]}")
[ -z "${RPT_SETUP_ONLY:-}" ] || read -ra packages <<<"$RPT_SETUP_ONLY"

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} Debian packages already installed"
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's Python refuses pip installs into the system (PEP 668): a virtual environment of
# Debian's /usr/bin/python3, which the tests find at $repo/.venv.
[ "${RPT_SETUP_TEST_TOOLS:-1}" = 0 ] && exit 0
[ -n "${RPT_SETUP_ONLY:-}" ] && exit 0
requirements="$repo/tools/test-requirements.txt"
venv="$repo/.venv"
wanted=$(grep -v '^#' "$requirements" | grep . | sort)
installed=$("$venv/bin/python3" -m pip freeze 2>/dev/null | sort || true)
if [ -n "$wanted" ] && [ -z "$(comm -23 <(echo "$wanted") <(echo "$installed"))" ]; then
  echo "setup: test tools already installed in $venv"
else
  echo "setup: installing" $wanted "into $venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check -r "$requirements"
fi

# CTranslate2, sacrebleu and libretranslatepy are not in Debian; bench/compare_ctranslate2.py and
# tests/tools/rpt_to_ctranslate2_test.py (ctest's python_tools, /usr/bin/python3) need them.
# Debian 12's python3 is "externally managed": pip installs beside it, into
# /usr/local/lib/python3.*/dist-packages (--break-system-packages), with --no-deps so that it
# never replaces a Debian package (PyPI's numpy 2 would break python3-torch); their dependencies
# are the Debian packages above (numpy, yaml; regex, tabulate, portalocker, lxml, colorama). Not
# a venv: the tests run Debian's python3 with its torch and numpy, and this keeps them on one
# interpreter.
# libretranslatepy (no dependencies) and deepl (DeepL's official client; Debian's python3-requests)
# are the clients tests/server/libretranslate_test.py and deepl_test.py speak to rpt-server with;
# selenium drives Chromium for tests/server/web_ui_test.py: 4.15.2, whose dependencies Debian 12
# has (above; 4.25 wants newer websocket-client and typing_extensions, 4.52 urllib3 2).
# transformers (4.46: the last to run on Debian 12's torch 1.13) builds and runs the T5 models
# tests/tools/convert_hf_t5_test.py converts and compares against, with its tokenizers,
# safetensors and huggingface_hub.
pins=(ctranslate2==4.8.5 sacrebleu==2.6.0 libretranslatepy==2.1.4 deepl==1.32.0 selenium==4.15.2
      transformers==4.46.3 tokenizers==0.20.3 safetensors==0.4.5 huggingface_hub==0.26.5)
if /usr/bin/python3 -c "import ctranslate2, sacrebleu, libretranslatepy, deepl, selenium, sys, importlib.metadata as m
import transformers, tokenizers, safetensors, huggingface_hub
sys.exit(ctranslate2.__version__ != '4.8.5' or sacrebleu.__version__ != '2.6.0'
         or m.version('libretranslatepy') != '2.1.4' or deepl.__version__ != '1.32.0'
         or selenium.__version__ != '4.15.2' or m.version('transformers') != '4.46.3'
         or m.version('tokenizers') != '0.20.3' or m.version('safetensors') != '0.4.5'
         or m.version('huggingface_hub') != '0.26.5')" 2>/dev/null; then
  echo "setup: ${pins[*]} already installed"
else
  echo "setup: pip installing ${pins[*]}"
  "${sudo_cmd[@]}" /usr/bin/python3 -m pip install -q --break-system-packages --no-deps "${pins[@]}"
fi
