# Talaria build and test entry points. Go must be go1.27.3 (the Temporal server
# v1.32.2 needs Go >= 1.26.10); the go command downloads that toolchain itself.
export GOTOOLCHAIN := go1.27.3
# Every build is pure Go (SQLite is modernc.org/sqlite) and path-free, so the
# binary is static and make build, make test and the e2e tests' own build of
# the binary share one build cache.
export CGO_ENABLED := 0
export GOFLAGS := -buildvcs=false -trimpath

BIN := bin/talaria

.PHONY: build release serve test test-scale test-short bench bench-floor vet lint workflowcheck clean

# The commit reaches the binary through the linker, since GOFLAGS has
# -buildvcs=false (outside a git checkout the binary says "unknown").
GIT_COMMIT = $(shell git rev-parse --short=12 HEAD 2>/dev/null)
GIT_MODIFIED = $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo true)
GIT_VERSION = $(shell git describe --tags --dirty 2>/dev/null)
LDFLAGS = $(if $(GIT_COMMIT),-X main.commit=$(GIT_COMMIT) -X main.modified=$(GIT_MODIFIED)) $(if $(GIT_VERSION),-X main.version=$(GIT_VERSION))

build:
	@echo "building $(BIN), a static pure-Go binary (CGO_ENABLED=0; the first build compiles the Temporal server: about 10 minutes on 2 cores; later builds only relink)..."
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/talaria
	@echo "built $(BIN) ($$(du -h $(BIN) | cut -f1)): run ./$(BIN) version"

# A release binary: as build, without the symbol table and DWARF debug
# information (-s -w), which makes it about 30 % smaller.
release:
	@echo "building $(BIN) for release (static, stripped; the first build compiles the Temporal server: about 10 minutes on 2 cores)..."
	go build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(BIN) ./cmd/talaria
	@echo "built $(BIN) ($$(du -h $(BIN) | cut -f1)): run ./$(BIN) version"

serve: build
	@scripts/ensure-bwrap.sh
	./$(BIN) serve

# The suite, after the static checks (lint); bubblewrap and python3-pytest
# are installed for the sandbox tests and a throwaway PostgreSQL is started
# for the store tests. The scale tests (named TestScale...: hundreds of
# messages through one session, thousand-iteration turns, the whole hostile
# corpus, streams under load) are left to test-scale, which .ci/run runs
# after it. Tests that share nothing run in parallel, four at a time in a
# package (most of an end-to-end test is waiting on processes it started).
# The 45-minute bound on one package's tests is a guard for a loaded
# machine, not a target.
test: lint
	scripts/ensure-test-packages.sh
	scripts/with-postgres.sh go test -count=1 -timeout 45m -parallel 4 -skip '^TestScale' ./...

# The scale tests alone (see test), one at a time: each loads the machine
# by design (100 concurrent streams, hundreds of turns), and two at once
# measure each other.
test-scale:
	scripts/ensure-test-packages.sh
	scripts/with-postgres.sh go test -count=1 -timeout 45m -p 1 -parallel 1 -run '^TestScale' ./...

test-short:
	go test -count=1 -short ./...

bench:
	go test -run '^$$' -bench . -benchtime 1x ./...

# Talaria's throughput against its floor (the same workflows with no Talaria
# code), in PAIRS alternate runs: scripts/floor-ratio.sh.
PAIRS ?= 6
bench-floor:
	scripts/floor-ratio.sh $(PAIRS)

vet:
	go vet ./...

# Static checks: go vet, gofmt, a tidy go.mod, Temporal's workflow
# determinism check and staticcheck (from the module proxy at a pinned
# version, kept out of go.mod so its dependencies never move ours). A
# finding that is deliberate carries a `//lint:ignore CHECK reason` comment.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: vet workflowcheck
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then \
		echo "gofmt: not formatted (run gofmt -w on them):" >&2; echo "$$unformatted" >&2; exit 1; fi
	@go mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy" >&2; exit 1; }
	@echo "staticcheck ./... (the first run analyses every dependency: a few minutes)"
	go run $(STATICCHECK) ./...

# Temporal's static determinism check of the workflow code (a tool in go.mod,
# so nothing is installed by hand): every function reachable from a workflow
# must be free of time.Now, global rand, goroutines, channels, map ranges and
# the like. Test files are left out (no workflow of theirs is registered by the
# worker). False positives deep in the standard library are listed, with their
# reasons, in workflows/workflowcheck.config.yaml; a deterministic line of ours
# carries a `//workflowcheck:ignore <why>` comment.
workflowcheck:
	@go tool workflowcheck -test=false -config workflows/workflowcheck.config.yaml ./workflows/...; rc=$$?; \
	if [ $$rc -eq 3 ]; then echo "workflowcheck: the workflow code above is not deterministic and would break replay: use workflow.Now, workflow.Go, workflow channels, sorted map keys or an activity; a false positive gets a justified //workflowcheck:ignore or an entry in workflows/workflowcheck.config.yaml" >&2; fi; \
	exit $$rc

clean:
	rm -rf bin
