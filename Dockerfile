# rpt server image (CPU). Build: docker build -t rpt:0.1.0 .
# Run: docker run -p 50051:50051 -p 9464:9464 rpt:0.1.0
# deploy/kubernetes/rpt.yaml runs it (tests/deploy_run_test.py starts rpt-server with this
# ENTRYPOINT plus the Deployment's args). Base image pinned to a Debian point release; the runtime
# libraries are pinned by their Debian 12 sonames.
ARG DEBIAN_IMAGE=debian:12.12-slim
FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
COPY tools/setup.sh tools/setup.sh
RUN RPT_SETUP_TEST_TOOLS=0 bash tools/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRPT_BUILD_TESTS=OFF \
      -DRPT_BUILD_BENCH=OFF -DRPT_WITH_CUDA=OFF \
 && cmake --build build \
 && cmake --install build --prefix /opt/rpt

FROM ${DEBIAN_IMAGE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libsentencepiece0 libopenblas0-pthread libblis4-serial libspdlog1.10 \
      libprometheus-cpp-core1.0 libmicrohttpd12 zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/rpt /opt/rpt
COPY models /opt/rpt/models
EXPOSE 50051 9464
# nobody:nogroup, numeric so that Kubernetes can check runAsNonRoot; the server writes no files
# (a read-only root filesystem works).
USER 65534:65534
ENTRYPOINT ["/opt/rpt/bin/rpt-server", "--listen", "0.0.0.0:50051", "--metrics-port", "9464"]
# The bundled models (models/*, docs/MODELS.md).
CMD ["--model", "en-de=/opt/rpt/models/en-de", "--model", "en-fr=/opt/rpt/models/en-fr"]
