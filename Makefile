# warden — make targets. `make run` and `make test` are the two commands in the README.
SHELL := /bin/bash
GO ?= go
BIN := bin/warden
HOME_DEMO := $(CURDIR)/.warden-demo

.PHONY: all build run test test-short lint fuzz bench soak clean deps install uninstall

all: build

# Static and without cgo: a dynamically linked binary spends ~0.5 ms per start
# in the loader and libc before main runs (warden runs once per agent action).
# warden-exec, the client hosts start per hook call and command, is the C
# client where a C compiler is here (half the start of a Go program), else
# the Go one (scripts/warden-exec.sh).
# The version and commit `warden version` prints, from git when there is one.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/agentwarden/warden/cli.version=$(VERSION) -X github.com/agentwarden/warden/cli.commit=$(COMMIT)
# warden-sandbox, the small binary a sandbox's init and stage start from
# (cmd/warden-sandbox), is built first: warden records its Go build ID and
# uses it only while the one beside it has that ID.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/warden-sandbox ./cmd/warden-sandbox
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS) -X github.com/agentwarden/warden/sandbox.helperBuildID=$$($(GO) tool buildid bin/warden-sandbox)" -o $(BIN) ./cmd/warden
	GO=$(GO) ./scripts/warden-exec.sh bin/warden-exec

# Install warden, warden-sandbox and warden-exec side by side at a stable path
# ($(PREFIX)/bin, /usr/local/bin by default; PREFIX=$HOME/.local needs no root).
# `warden install HOST` points agent hosts' hooks there, never at bin/.
PREFIX ?= /usr/local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) bin/warden-sandbox bin/warden-exec $(DESTDIR)$(PREFIX)/bin/
	@echo "installed $(DESTDIR)$(PREFIX)/bin/warden, warden-sandbox and warden-exec; next: warden init, then warden install claude (or codex, gemini, cursor)"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/warden $(DESTDIR)$(PREFIX)/bin/warden-sandbox $(DESTDIR)$(PREFIX)/bin/warden-exec

# Set up a warden home in the repository and take a short scripted tour of the
# gate: decisions of every kind, the emergency stop, the audit log and its chain.
run: build
	WARDEN=$(CURDIR)/$(BIN) WARDEN_HOME=$(HOME_DEMO) ./scripts/tour.sh

# Everything CI runs: formatting, vet, and every test with the race detector.
# The fleet store's tests get a throwaway PostgreSQL cluster
# (WARDEN_TEST_POSTGRES_DSN; scripts/postgres.sh), unless one is given.
test: deps
	./scripts/postgres.sh run ./scripts/test.sh

# It also builds warden for the other systems it compiles for (macOS, the BSDs,
# 32-bit Linux), where no native sandbox runs and allow and sandbox verdicts
# ask: their build had broken unnoticed. Windows is not one of them.
CROSS ?= darwin/arm64 darwin/amd64 freebsd/amd64 linux/386
lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed on:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	@for t in $(CROSS); do echo "GOOS=$${t%/*} GOARCH=$${t#*/} go build ./..."; GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build ./... || exit 1; done

# Long fuzzing, behind its own target: FUZZTIME per target (default 60s).
FUZZTIME ?= 60s
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

# Benchmarks: in-process (go test -bench) and the built binary's cold start.
bench: build
	./scripts/bench.sh

# The memory soak (issue 26): a daemon decides a million tool calls and
# answers a hundred thousand approvals; its live heap must stay flat. The
# normal tests run the same check with 5,000 and 500.
soak:
	WARDEN_SOAK_DECISIONS=1000000 WARDEN_SOAK_APPROVALS=100000 $(GO) test -run TestDaemonMemoryIsFlat -count=1 -timeout 60m -v ./app/

deps:
	./scripts/deps.sh

clean:
	rm -rf bin $(HOME_DEMO)
