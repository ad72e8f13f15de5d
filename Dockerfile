# statekeeper server image: slim Python, non-root, health checked through the
# standard gRPC health service at the configured listen address.
#
# Layers: the pinned dependencies (requirements.lock) first, then the source,
# so that a change of code reinstalls only the two local packages.
FROM python:3.11.7-slim-bookworm AS build
WORKDIR /src
COPY requirements.lock ./
RUN pip install --no-cache-dir --prefix=/install -r requirements.lock
COPY pyproject.toml README.md ./
# The server imports its generated stubs from the Python client package
# (statekeeper_client.v1), installed from the same tree.
COPY clients/python ./clients/python
COPY server ./server
RUN pip install --no-cache-dir --no-deps --prefix=/install ./clients/python .

FROM python:3.11.7-slim-bookworm
COPY --from=build /install /usr/local
RUN useradd --system --uid 10001 --home-dir /data --create-home statekeeper
USER 10001
WORKDIR /data
# Listening on every address, `serve` refuses to start without API keys:
# give them with -e STATEKEEPER_API_KEYS=key1=tenant1,key2=tenant2, or
# -e STATEKEEPER_ALLOW_ANONYMOUS=true for a container only trusted peers reach.
ENV STATEKEEPER_LISTEN=0.0.0.0:50051 \
    STATEKEEPER_DATA_DIR=/data \
    STATEKEEPER_LOG_FORMAT=json
EXPOSE 50051 9090
VOLUME ["/data"]
# `statekeeper health` dials the address STATEKEEPER_LISTEN (or --listen in a
# config file) names, so a changed port keeps the check right.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["statekeeper", "health", "--timeout", "3"]
ENTRYPOINT ["statekeeper"]
CMD ["serve"]
