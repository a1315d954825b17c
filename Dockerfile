# syntax=docker/dockerfile:1
#
# Talaria: one static binary; the same image runs serve, worker, scheduler,
# temporal and the client commands (see docker-compose.yml). Build with
# BuildKit (the default of current Docker): the module and build caches are
# cache mounts, so a change to Talaria's code relinks in seconds instead of
# recompiling the Temporal server (minutes).
#
#   docker build -t talaria:local --build-arg VERSION=$(git describe --tags --always) .

# The Go release the Makefile pins (GOTOOLCHAIN=go1.27.3); GOTOOLCHAIN=local
# makes a go.mod that asks for another one fail here instead of downloading it.
FROM golang:1.27.3-alpine3.24 AS build
ENV GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false -trimpath"
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
# .dockerignore keeps .git out of the context, so the version and commit come
# as build arguments (make build reads them from git).
ARG VERSION=""
ARG COMMIT=""
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -ldflags "-s -w ${VERSION:+-X main.version=$VERSION} ${COMMIT:+-X main.commit=$COMMIT}" \
        -o /out/talaria ./cmd/talaria

# The runtime holds what the agent's tools use (a shell, git, curl) and tini,
# which reaps the processes those tools leave behind when talaria is PID 1.
FROM debian:trixie-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates bash git curl tini bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --user-group talaria \
    && install -d -o talaria -g talaria /home/talaria/work
COPY --from=build /out/talaria /usr/local/bin/talaria
USER talaria
ENV TALARIA_HOME=/home/talaria/.talaria
WORKDIR /home/talaria/work
# No HEALTHCHECK here: the same image also runs one-shot client commands.
# docker-compose.yml gives each long-running service `talaria doctor` as its
# health check (configuration, store, Temporal, model endpoint, disk).
ENTRYPOINT ["/usr/bin/tini", "--", "talaria"]
CMD ["serve"]
