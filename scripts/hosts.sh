#!/usr/bin/env bash
# Installs the agent hosts the real-host suite (e2e/hosts) drives, pinned,
# from the npm registry into bin/cache/npm-hosts: Claude Code, Codex CLI and
# Gemini CLI. Called by scripts/deps.sh (so by `make test`), and by the suite
# itself when they are missing. A second run with the same pins does nothing.
#
# Exit status 0 when the hosts are installed, or when the npm registry cannot
# be reached (the reason is then written to bin/cache/npm-hosts/.unreachable,
# and the suite skips saying so); 1 when the registry answers and the
# install still fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pins. Codex's is shared with scripts/bench_sandbox.sh (CODEX_VERSION).
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_VERSION=0.61.0

dir=${NPM_HOSTS_DIR:-$PWD/bin/cache/npm-hosts}
stamp="claude-code $CLAUDE_VERSION
codex $CODEX_VERSION
gemini-cli $GEMINI_VERSION"

mkdir -p "$dir"
rm -f "$dir/.unreachable"
installed() {
	[ "$(cat "$dir/.hosts-versions" 2>/dev/null)" = "$stamp" ] || return 1
	for b in claude codex gemini; do [ -e "$dir/node_modules/.bin/$b" ] || return 1; done
}
installed && exit 0

unreachable() {
	echo "$1" >"$dir/.unreachable"
	echo "hosts: $1; the real-host suite (e2e/hosts) will skip" >&2
	exit 0
}
command -v npm >/dev/null || unreachable "npm is not installed, so the npm registry cannot be reached"
registry=$(npm config get registry 2>/dev/null || echo "the npm registry")
npm ping >/dev/null 2>&1 || unreachable "the npm registry ($registry) cannot be reached: npm ping failed"

cat >"$dir/package.json" <<EOF
{
  "private": true,
  "description": "agent hosts for warden's real-host suite (scripts/hosts.sh writes this)",
  "dependencies": {
    "@anthropic-ai/claude-code": "$CLAUDE_VERSION",
    "@google/gemini-cli": "$GEMINI_VERSION",
    "@openai/codex": "$CODEX_VERSION"
  }
}
EOF
echo "hosts: installing Claude Code $CLAUDE_VERSION, Codex $CODEX_VERSION and Gemini CLI $GEMINI_VERSION into $dir" >&2
log=$dir/npm-install.log
if ! npm install --prefix "$dir" --no-audit --no-fund --no-package-lock >"$log" 2>&1; then
	npm ping >/dev/null 2>&1 || unreachable "the npm registry ($registry) stopped answering during the install: $(tail -1 "$log")"
	echo "hosts: npm install failed (see $log):" >&2
	tail -20 "$log" >&2
	exit 1
fi
echo "$stamp" >"$dir/.hosts-versions"
echo "$CODEX_VERSION" >"$dir/.codex-version" # what scripts/bench_sandbox.sh checks
installed || { echo "hosts: npm installed the hosts but $dir/node_modules/.bin lacks claude, codex or gemini" >&2; exit 1; }
