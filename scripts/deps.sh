#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine with Go.
# Nothing is needed beyond Go for now; later capabilities add their packages here
# (PostgreSQL for the fleet store). Chromium runs the web console's browser tests.
set -euo pipefail
command -v go >/dev/null || { echo "deps: Go is not installed; install Go 1.26 first" >&2; exit 1; }
go mod download
# The sandbox tests run python3 from /usr/bin inside the sandbox (the
# system's, not a version manager's shim under $HOME, which the sandbox
# cannot read), and curl through the egress proxy.
for need in python3:/usr/bin/python3 curl:/usr/bin/curl chromium:/usr/bin/chromium; do
	pkg=${need%%:*} bin=${need#*:}
	[ -x "$bin" ] && continue
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y "$pkg" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y "$pkg" >/dev/null; }
	else
		echo "deps: $bin is missing; the sandbox tests that run it will fail: sudo apt-get install -y $pkg" >&2
	fi
done
# The agent hosts the real-host suite (e2e/hosts) drives, pinned, from npm
# into bin/cache/npm-hosts; where the registry cannot be reached it says so
# and the suite skips.
"$(dirname "$0")/hosts.sh"
