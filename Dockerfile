# statekeeper server image: slim Python, non-root, health checked through the
# standard gRPC health service.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
# The server imports its generated stubs from the Python client package
# (statekeeper_client.v1), installed from the same tree.
COPY clients/python ./clients/python
RUN pip install --no-cache-dir --prefix=/install ./clients/python .

FROM python:3.11-slim
COPY --from=build /install /usr/local
RUN useradd --system --uid 10001 --home-dir /data --create-home statekeeper
USER statekeeper
WORKDIR /data
ENV STATEKEEPER_LISTEN=0.0.0.0:50051 \
    STATEKEEPER_DATA_DIR=/data \
    STATEKEEPER_LOG_FORMAT=json
EXPOSE 50051
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD python -c "import grpc,sys; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; s=g.HealthStub(grpc.insecure_channel('127.0.0.1:50051')).Check(h.HealthCheckRequest(), timeout=2).status; sys.exit(0 if s == h.HealthCheckResponse.SERVING else 1)"
ENTRYPOINT ["statekeeper"]
CMD ["serve"]
