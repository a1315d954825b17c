# Talaria: one static binary; the same image runs serve, worker, temporal and
# the client commands (see docker-compose.yml).
FROM golang:1.26-bookworm AS build
# Pure Go (SQLite is modernc.org/sqlite): a static binary, as make release.
ENV GOTOOLCHAIN=go1.27.3 GOFLAGS=-buildvcs=false CGO_ENABLED=0
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags '-s -w' -o /out/talaria ./cmd/talaria

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates bash git curl \
    && rm -rf /var/lib/apt/lists/* && useradd --create-home --uid 10001 talaria
COPY --from=build /out/talaria /usr/local/bin/talaria
USER talaria
ENV TALARIA_HOME=/home/talaria/.talaria
WORKDIR /home/talaria/work
ENTRYPOINT ["talaria"]
CMD ["serve"]
