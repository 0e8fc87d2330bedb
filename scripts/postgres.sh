#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the fleet store's tests (issue 27).
#
#   scripts/postgres.sh install        install Debian's postgresql when initdb is missing (root only)
#   scripts/postgres.sh start DIR      initdb into DIR and start it; prints the DSN
#   scripts/postgres.sh stop DIR       stop the cluster in DIR and remove DIR
#   scripts/postgres.sh halt DIR       stop the server in DIR, keeping its data; resume DIR starts it again
#   scripts/postgres.sh run CMD…       run CMD with WARDEN_TEST_POSTGRES_DSN set to a fresh
#                                      cluster, stopped afterwards (what `make test` does)
#
# The cluster listens only on a Unix socket inside DIR (no TCP port, so
# parallel runs never collide) and trusts local connections: it is for tests,
# never for data. PostgreSQL refuses to run as root, so as root the server runs
# as the postgres user, which owns DIR. With WARDEN_PG_DURABLE=1 the cluster
# keeps fsync on (benchmarks); otherwise fsync is off, which makes the tests'
# CREATE DATABASE and commits cheap and changes nothing they observe.
# When WARDEN_TEST_POSTGRES_DSN is already set, `run` uses that server.
set -euo pipefail

bindir() {
	if command -v initdb >/dev/null 2>&1; then
		dirname "$(readlink -f "$(command -v initdb)")"
		return
	fi
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		[ -x "$d/initdb" ] && { echo "$d"; return; }
	done
	return 1
}

install() {
	bindir >/dev/null && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "postgres: initdb is missing; the fleet store's tests need it: sudo apt-get install -y postgresql" >&2
		return 1
	fi
	apt-get install -y postgresql >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y postgresql >/dev/null; }
	bindir >/dev/null
}

# as runs its arguments as the user that owns the cluster.
as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

start() {
	local dir=$1 bin
	bin=$(bindir) || { echo "postgres: PostgreSQL is not installed (scripts/postgres.sh install)" >&2; return 1; }
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	chmod 700 "$dir"
	as "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	local fsync=off
	[ "${WARDEN_PG_DURABLE:-}" = 1 ] && fsync=on
	cat >>"$dir/data/postgresql.conf" <<-EOF
		listen_addresses = ''
		unix_socket_directories = '$dir'
		fsync = $fsync
		full_page_writes = $fsync
		max_connections = 300
	EOF
	resume "$dir" || return 1
	echo "postgres://postgres@/postgres?host=$dir&sslmode=disable"
}

# halt stops the server of the cluster in DIR and keeps its data (a database
# outage, for the failure tests); resume starts it again.
halt() {
	local bin
	bin=$(bindir) || return 1
	as "$bin/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null
}

resume() {
	local bin
	bin=$(bindir) || return 1
	as "$bin/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 start >/dev/null || { cat "$1/server.log" >&2; return 1; }
}

stop() {
	local dir=$1 bin
	bin=$(bindir) || return 0
	[ -d "$dir/data" ] && as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}

run() {
	if [ -n "${WARDEN_TEST_POSTGRES_DSN:-}" ]; then
		"$@"
		return
	fi
	local dir dsn rc=0
	dir=$(mktemp -d /tmp/warden-pg.XXXXXX)
	if dsn=$(start "$dir"); then
		echo "postgres: throwaway cluster in $dir" >&2
		WARDEN_TEST_POSTGRES_DSN=$dsn "$@" || rc=$?
	else
		echo "postgres: no throwaway cluster could start; the PostgreSQL tests start their own or skip saying why" >&2
		"$@" || rc=$?
	fi
	stop "$dir"
	return $rc
}

cmd=${1:-}
shift || true
case $cmd in
install) install ;;
start) start "$1" ;;
stop) stop "$1" ;;
halt) halt "$1" ;;
resume) resume "$1" ;;
run) run "$@" ;;
*)
	echo "usage: $0 install | start DIR | stop DIR | halt DIR | resume DIR | run CMD..." >&2
	exit 2
	;;
esac
