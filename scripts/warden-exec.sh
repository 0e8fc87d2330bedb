#!/usr/bin/env bash
# Builds warden-exec, the client an agent host starts for every hook call and
# contained command, into OUT: the C client (cmd/warden-exec/native), which
# starts in about half the time of the Go one, when a C compiler is here;
# else, or with WARDEN_EXEC_CLIENT=go, the Go client (cmd/warden-exec). Both
# speak the same wire (internal/execwire) and are tested against it.
#
#	scripts/warden-exec.sh OUT
set -euo pipefail
out=${1:?usage: scripts/warden-exec.sh OUT}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/.."
src=cmd/warden-exec/native/warden-exec.c
cc=${CC:-cc}
if [ "${WARDEN_EXEC_CLIENT:-}" != go ] && command -v "$cc" >/dev/null; then
	# Static where libc allows it: no loader at each start.
	if "$cc" -O2 -static -o "$out" "$src" 2>/dev/null || "$cc" -O2 -o "$out" "$src"; then
		exit 0
	fi
	echo "warden-exec: $cc could not build $src; the Go client is built instead" >&2
fi
CGO_ENABLED=0 ${GO:-go} build -trimpath -o "$out" ./cmd/warden-exec
