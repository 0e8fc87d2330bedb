#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine with Go.
# Chromium runs the web console's browser tests; PostgreSQL the fleet store's.
set -euo pipefail
command -v go >/dev/null || { echo "deps: Go is not installed; install Go 1.26 first" >&2; exit 1; }
go mod download
# The sandbox tests run python3 from /usr/bin inside the sandbox (the
# system's, not a version manager's shim under $HOME, which the sandbox
# cannot read), and curl through the egress proxy.
# gcc builds the C warden-exec (scripts/warden-exec.sh), which its tests run.
for need in python3:/usr/bin/python3 curl:/usr/bin/curl chromium:/usr/bin/chromium gcc:/usr/bin/gcc; do
	pkg=${need%%:*} bin=${need#*:}
	[ -x "$bin" ] && continue
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y "$pkg" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y "$pkg" >/dev/null; }
	else
		echo "deps: $bin is missing; the sandbox tests that run it will fail: sudo apt-get install -y $pkg" >&2
	fi
done
# PostgreSQL for the fleet store's tests (issue 27): Debian's postgresql,
# whose initdb scripts/postgres.sh uses for a throwaway cluster.
"$(dirname "$0")/postgres.sh" install || echo "deps: the PostgreSQL tests will start no server and skip" >&2
# The agent hosts the real-host suite (e2e/hosts) drives, pinned, from npm
# into bin/cache/npm-hosts; where the registry cannot be reached it says so
# and the suite skips.
"$(dirname "$0")/hosts.sh"
# The MCP servers the MCP proxy tests run against (mcp/), pinned, from npm
# into bin/cache/npm-mcp; where the registry cannot be reached they skip.
"$(dirname "$0")/mcp-servers.sh"
