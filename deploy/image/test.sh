#!/usr/bin/env bash
# Builds the Dockerfile and runs the image as deploy/kubernetes/rpt.yaml's Deployment runs it
# (tests/deploy/deploy_run_test.py --image): the paths and libraries the command line needs are in
# the image, the probes pass, both bundled models translate over gRPC and JSON, /metrics counts
# the calls, `podman stop` drains to exit 0. Then `podman kube play` of the manifest's Deployment
# (tests/deploy/kube_play_test.py). tools/test.sh (so CI) runs it last; RPT_IMAGE_TEST=0 skips it.
# Rootful podman on a base image debootstrapped from Debian's mirror (deploy/image/base-image.sh);
# podman's layer cache makes a second build take seconds. Prints the build time and image size.
#   bash deploy/image/test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/deploy/image/containers.conf"
[ "$(id -u)" -eq 0 ] || { echo "image test: rootful podman, run as root (or via sudo)" >&2; exit 1; }
start=$SECONDS
base=$(bash deploy/image/base-image.sh)
# The image the Deployment names (rpt:0.1.0 -> localhost/rpt:0.1.0, podman's name for it).
image=localhost/$(awk '$1 == "image:" {print $2; exit}' deploy/kubernetes/rpt.yaml)
# The host's compiler cache, when its build used one (cmake/RptCcache.cmake), lent read-only:
# the build stage compiles only what the host has not (RPT_CCACHE_DIR, else ccache's own).
cache_args=()
cache_dir=${RPT_CCACHE_DIR:-$(ccache -k cache_dir 2>/dev/null || true)}
if [ -n "$cache_dir" ] && [ -d "$cache_dir" ]; then
  cache_args=(--volume "$cache_dir:/ccache:ro" --build-arg CCACHE_DIR=/ccache
              --build-arg CCACHE_READONLY=1 --build-arg CCACHE_NOSTATS=1)
fi
podman build --quiet --build-arg "DEBIAN_IMAGE=$base" "${cache_args[@]}" --tag "$image" . \
  > /dev/null
built=$SECONDS
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "image test: $image built in $((built - start)) s (base $base, compiler cache" \
  "${cache_dir:-none}), $((size / 1000000)) MB"
proto_dir=$(sed -n 's/^RPT_GRPC_PROTO_DIR:PATH=//p' "${RPT_BUILD_DIR:-build}/CMakeCache.txt" \
  2>/dev/null || true)
proto_dir=${proto_dir:-/usr/share/gocode/src/google.golang.org/grpc/debian/missing-sources/grpc/grpc-proto/master}
/usr/bin/python3 tests/deploy/deploy_run_test.py --proto-dir "$proto_dir" --image "$image"
/usr/bin/python3 tests/deploy/kube_play_test.py --proto-dir "$proto_dir"
echo "image test: passed in $((SECONDS - start)) s"
