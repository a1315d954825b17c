# Talaria build and test entry points. Go must be go1.27.3 (the Temporal server
# v1.32.2 needs Go >= 1.26.10); the go command downloads that toolchain itself.
export GOTOOLCHAIN := go1.27.3
export GOFLAGS := -buildvcs=false

BIN := bin/talaria

.PHONY: build serve test test-short bench fuzz vet clean

build:
	go build -o $(BIN) ./cmd/talaria

serve: build
	./$(BIN) serve

# The whole suite; a throwaway PostgreSQL is started for the store tests.
test:
	scripts/with-postgres.sh go test -count=1 -timeout 25m ./...

test-short:
	go test -count=1 -short ./...

bench:
	go test -run '^$$' -bench . -benchtime 1x ./...

vet:
	go vet ./...

clean:
	rm -rf bin
