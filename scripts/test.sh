#!/usr/bin/env bash
# The whole test suite: what `make test` and CI run.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then echo "gofmt needed on:"; echo "$unformatted"; exit 1; fi
echo "== go vet"
go vet ./...
echo "== go test -race"
# A race-instrumented program sleeps a second as it exits (the race
# runtime's atexit_sleep_ms), waiting for reports from threads still
# running. The CLI's tests run the test binary as warden in every script
# step, so that second was most of the suite's time (cli: 385 s with it,
# 109 s without, 2026-11-29). Races are still reported as they happen.
export GORACE="${GORACE:-atexit_sleep_ms=0}"
# The longest package, e2e/session, took 851 s alone on 2 cores otherwise
# quiet (2026-11-30, fourteenth session), and the whole suite 1,179 s: the
# per-package timeout leaves room for a slower, shared CI machine while
# still stopping a hang. It runs without the race detector, beside the
# rest: what it tests is the warden binary it builds (never race-built) and
# the programs it runs; its own harness under the race detector was a fifth
# of the suite's CPU (310 s of 1,630 s, process accounting, 2026-11-30).
# Every other package runs under it.
# The rest run one package at a time beside it, as go test ./... ran them
# beside it on 2 cores: three test binaries at once starve the agent hosts'
# tests and the browser's (a click lost to a re-render, a server slower than
# a host waits for).
pkgs=$(go list ./... | grep -v '/e2e/session$')
go test -count=1 -timeout 25m ./e2e/session &
e2e=$!
status=0
go test -race -p 1 -count=1 -timeout 25m $pkgs || status=$?
wait "$e2e" || status=$?
exit "$status"
