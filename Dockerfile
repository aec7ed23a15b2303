# rpt server image (CPU). docs/kubernetes.md: building it with docker, podman or buildah, its size,
# user, flags and environment. deploy/image/test.sh builds and runs it as the Deployment does.
#   docker build -t rpt:0.1.0 .
#   docker run -p 50051:50051 -p 9464:9464 rpt:0.1.0
# The base is a Debian 12 point release (a tag a reader can look up, not a digest no one can
# read); its packages are then installed from the Debian 12 archive as it stands at build time,
# security updates included, so a digest would not make the build reproducible anyway.
# Without a registry: --build-arg DEBIAN_IMAGE=$(bash deploy/image/base-image.sh) (debootstrap).
ARG DEBIAN_IMAGE=debian:12.12-slim

FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
# The build packages only (tools/setup.sh's build_packages): its own layer, cached until
# setup.sh changes.
COPY tools/setup.sh tools/setup.sh
RUN RPT_SETUP_TEST_TOOLS=0 bash tools/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# A compiler cache lent by the builder (deploy/image/test.sh: --volume CACHE:/ccache --build-arg
# CCACHE_DIR=/ccache --build-arg CCACHE_READONLY=1): objects of the same sources compiled with the
# same compiler come from it (cmake/RptCcache.cmake). Unset, this stage compiles everything.
ARG CCACHE_DIR
ARG CCACHE_READONLY
ARG CCACHE_NOSTATS
ARG CCACHE_TEMPDIR=/tmp/ccache
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRPT_BUILD_TESTS=OFF \
      -DRPT_BUILD_BENCH=OFF -DRPT_WITH_CUDA=OFF "-DRPT_CCACHE=${CCACHE_DIR:+ON}" \
 && cmake --build build --target rpt-server rpt-translate rpt-spans \
 && cmake --install build --prefix /opt/rpt --component runtime \
 && mkdir -p /opt/rpt/share/rpt \
 && bash deploy/image/runtime-packages.sh /opt/rpt/bin/* > /opt/rpt/share/rpt/runtime-packages

FROM ${DEBIAN_IMAGE}
# Exactly the packages whose libraries the binaries load (runtime-packages.sh, from ldd).
COPY --from=build /opt/rpt/share/rpt/runtime-packages /opt/rpt/share/rpt/runtime-packages
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      $(cat /opt/rpt/share/rpt/runtime-packages) \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY --from=build /opt/rpt /opt/rpt
COPY models /opt/rpt/models
# Fails the build if a binary cannot load one of its libraries here.
RUN ! ldd /opt/rpt/bin/* | grep "not found"
EXPOSE 50051 9464
# nobody:nogroup, numeric so that Kubernetes can check runAsNonRoot; the server writes no files
# (a read-only root filesystem works).
USER 65534:65534
ENTRYPOINT ["/opt/rpt/bin/rpt-server", "--listen", "0.0.0.0:50051", "--metrics-port", "9464"]
# The bundled models (models/*, docs/MODELS.md).
CMD ["--model", "en-de=/opt/rpt/models/en-de", "--model", "en-fr=/opt/rpt/models/en-fr"]
