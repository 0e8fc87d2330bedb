#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine with Go.
# Nothing is needed beyond Go for now; later capabilities add their packages here
# (PostgreSQL for the fleet store, Chromium for the console).
set -euo pipefail
command -v go >/dev/null || { echo "deps: Go is not installed; install Go 1.26 first" >&2; exit 1; }
go mod download
