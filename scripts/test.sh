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
go test -race -count=1 -timeout 20m ./...
