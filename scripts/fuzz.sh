#!/usr/bin/env bash
# Runs every fuzz target in the module for a while each (default 60s):
#   make fuzz FUZZTIME=10m
# The seed corpora also run as ordinary tests in `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-60s}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func \(Fuzz[A-Za-z0-9_]*\)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sort -u); do
		echo "== $pkg $target ($fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
	done
done
