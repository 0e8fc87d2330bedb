#!/usr/bin/env bash
# The egress proxy beside the proxies people use today, in one interleaved
# run (issue 26): stripe/smokescreen (built from the Go module proxy with
# go install), Debian's squid and tinyproxy (installed with apt-get when
# missing), and warden proxy with a real home (every request decided by the
# gate, audited durably before it is answered, and its egress_request event
# logged). bench/proxyload serves the upstreams and drives the load: small
# GETs from 16 and 64 kept-alive clients, and a large download over plain
# HTTP and over CONNECT, each proxy once per round in a rotated order. Called
# by `make bench`; alone:
#
#	scripts/bench_proxy.sh     # ROUNDS=3 BULK_ROUNDS=7 DURATION=3s SIZE=104857600
#
# BASELINE=/path/to/an/older/warden adds that binary's proxy to the same
# run as warden-baseline (its own fresh home, the same policy), for a
# before/after comparison interleaved with the peers.
#
# Then warden serve alone: its resident memory idle and right after /v1/check
# from 16 and 64 clients (bench/daemonload).
#
# Figures go to docs/benchmarks.md ("Egress proxy beside smokescreen, squid
# and tinyproxy").
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
BULK_ROUNDS=${BULK_ROUNDS:-7}
DURATION=${DURATION:-3s}
SIZE=${SIZE:-104857600}
SMOKESCREEN_VERSION=${SMOKESCREEN_VERSION:-v0.1.0}
PEERS=$PWD/bin/peers

need() { # need COMMAND DEBIAN-PACKAGE
	command -v "$1" >/dev/null && return
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >/dev/null 2>&1 ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >/dev/null; }
	else
		echo "bench_proxy: $1 is missing; install it with: sudo apt-get install -y $2" >&2; exit 1
	fi
}
PATH=$PATH:/usr/sbin:/usr/bin
need squid squid
need tinyproxy tinyproxy
if [ ! -x "$PEERS/smokescreen" ]; then
	GOBIN=$PEERS go install "github.com/stripe/smokescreen@$SMOKESCREEN_VERSION"
fi

make --no-print-directory build >/dev/null
go build -o bin/proxyload ./bench/proxyload
go build -o bin/daemonload ./bench/daemonload

dir=$(mktemp -d "${TMPDIR:-/var/tmp}/warden-proxybench.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT

SMALL=127.0.0.1:18080 BULK=127.0.0.1:18081 TLS=127.0.0.1:18443
W=127.0.0.1:14750 S=127.0.0.1:14751 Q=127.0.0.1:14752 T=127.0.0.1:14753

# warden: a fresh home; loopback is private, so the policy allows it, and
# the rate limit (30 a minute by default) is lifted.
home=$dir/warden
bin/warden --home "$home" init >/dev/null
bin/warden --home "$home" config set network.allow_private '["127.0.0.1"]' >/dev/null
bin/warden --home "$home" config set network.rate_limit.per_minute 0 >/dev/null
bin/warden --home "$home" config set network.rate_limit.per_hour 0 >/dev/null
bin/warden --home "$home" proxy --listen "$W" --allow-domain "$SMALL" --allow-domain "$BULK" --allow-domain "$TLS" 2>"$dir/warden.log" &
pids+=($!); wpid=$!
baseline=()
if [ -n "${BASELINE:-}" ]; then
	B=127.0.0.1:14754 bhome=$dir/baseline
	"$BASELINE" --home "$bhome" init >/dev/null
	"$BASELINE" --home "$bhome" config set network.allow_private '["127.0.0.1"]' >/dev/null
	"$BASELINE" --home "$bhome" config set network.rate_limit.per_minute 0 >/dev/null
	"$BASELINE" --home "$bhome" config set network.rate_limit.per_hour 0 >/dev/null
	"$BASELINE" --home "$bhome" proxy --listen "$B" --allow-domain "$SMALL" --allow-domain "$BULK" --allow-domain "$TLS" 2>"$dir/baseline.log" &
	pids+=($!)
	baseline=(-proxy "warden-baseline=$B,pid=$!")
fi

# smokescreen: no ACL file (every host), loopback allowed; its per-request
# log line goes to a file, as a deployment would keep it.
"$PEERS/smokescreen" --listen-ip 127.0.0.1 --listen-port "${S##*:}" --allow-range 127.0.0.0/8 >"$dir/smokescreen.log" 2>&1 &
pids+=($!); spid=$!

# squid: no cache, its access log kept (its default), one process.
mkdir -p "$dir/squid" && chmod 0777 "$dir/squid"
cat >"$dir/squid/squid.conf" <<EOF
http_port $Q
http_access allow all
cache deny all
cache_mem 8 MB
access_log stdio:$dir/squid/access.log
cache_log $dir/squid/cache.log
pid_filename $dir/squid/squid.pid
coredump_dir $dir/squid
workers 1
EOF
squid -N -f "$dir/squid/squid.conf" &
pids+=($!); qpid=$!

# tinyproxy: every client and port allowed, logging at its default level.
cat >"$dir/tinyproxy.conf" <<EOF
User nobody
Group nogroup
Port ${T##*:}
Listen 127.0.0.1
Timeout 600
MaxClients 256
LogFile "$dir/tinyproxy.log"
LogLevel Info
EOF
chmod 0777 "$dir"
tinyproxy -d -c "$dir/tinyproxy.conf" &
pids+=($!); tpid=$!

for a in $W $S $Q $T ${B:-}; do
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/${a%:*}/${a##*:}") 2>/dev/null && break
		sleep 0.1
	done
done

echo "== egress proxies side by side: warden $(bin/warden version 2>/dev/null | head -1), smokescreen $SMOKESCREEN_VERSION, $(squid -v | head -1), $(tinyproxy -v 2>&1 | head -1)"
bin/proxyload -small "$SMALL" -bulk "$BULK" -tls "$TLS" -rounds "$ROUNDS" -bulk-rounds "$BULK_ROUNDS" -duration "$DURATION" -size "$SIZE" \
	-proxy "warden=$W,pid=$wpid" "${baseline[@]}" -proxy "smokescreen=$S,pid=$spid" -proxy "squid=$Q,pid=$qpid" -proxy "tinyproxy=$T,pid=$tpid"
# Answered requests' lines are grouped, several to an event: count both.
bin/warden --home "$home" audit events --type egress_request --json --limit 100000000 >"$dir/requestlog.json" 2>/dev/null || true
n=$(grep -c '"type":"egress_request"' "$dir/requestlog.json" || true)
lines=$(grep -o '"path_hash"' "$dir/requestlog.json" | wc -l)
echo "warden's audit log holds $lines request-log lines in $n egress_request events"

echo
echo "== the daemon's resident memory"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
pids=()
dhome=$dir/daemon
bin/warden --home "$dhome" init >/dev/null
bin/warden --home "$dhome" serve --no-proxy 2>"$dir/serve.log" &
pids+=($!); dpid=$!
for _ in $(seq 100); do [ -S "$dhome/warden.sock" ] && break; sleep 0.1; done
sleep 1
bin/daemonload -home "$dhome" -pid "$dpid" -clients 16,64 -duration "$DURATION"
