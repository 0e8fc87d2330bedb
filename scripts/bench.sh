#!/usr/bin/env bash
# Benchmarks: the in-process hot paths (go test -bench) and the whole-process
# cold start of `warden check` beside a plain Go hello-world, timed in the same
# run. Figures go to docs/benchmarks.md with this command: `make bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
RUNS=${RUNS:-300}

if ! command -v hyperfine >/dev/null; then
	if [ "$(id -u)" = 0 ]; then apt-get install -y hyperfine >/dev/null; else
		echo "bench: hyperfine is missing; install it with: sudo apt-get install -y hyperfine" >&2; exit 1; fi
fi

echo "== in-process benchmarks (go test -bench, count=$COUNT)"
go test -run '^$' -bench . -benchmem -count "$COUNT" \
	./app ./pipeline ./sqlite ./config ./redact ./shellguard/... ./hook ./fsguard ./fstools ./sandbox ./netguard ./finance/... ./mcp 2>&1 | grep -E '^(Benchmark|goos|cpu)' | tee bin/bench-go.txt

echo
echo "== cold start: warden check vs hello-world (hyperfine, $RUNS runs each)"
go build -trimpath -o bin/hello ./bench/hello
home=$(mktemp -d "${TMPDIR:-/var/tmp}/warden-bench.XXXXXX")
trap 'rm -rf "$home"' EXIT
bin/warden --home "$home" init >/dev/null
hyperfine -N --warmup 30 --runs "$RUNS" --export-json bin/coldstart.json \
	-n hello bin/hello \
	-n 'warden check' "bin/warden --home $home check tool call get_price" \
	-n 'warden check (fund-moving)' "bin/warden --home $home check tool call get_price --param amount_usd=0.000001"
python3 - <<'PY'
import json
r = {x["command"]: x for x in json.load(open("bin/coldstart.json"))["results"]}
h = r["hello"]["median"]
for name, x in r.items():
    print(f"{name:28s} median {x['median']*1e3:6.2f} ms  mean {x['mean']*1e3:6.2f} ± {x['stddev']*1e3:4.2f} ms  {x['median']/h:4.2f}x hello")
PY

echo
echo "== cold start: warden hook claude (Bash payload) and warden check vs hello-world, alternating ($RUNS runs each)"
go build -o bin/coldstart ./bench/coldstart
bin/coldstart -runs "$RUNS" -stdin bench/testdata/claude-bash.json -- bin/hello \
	-- bin/warden --home "$home" hook claude \
	-- bin/warden --home "$home" check tool call get_price

echo
echo "== cold start: warden check trade (paper exchange, dry run) vs hello-world, alternating ($RUNS runs each)"
bin/coldstart -runs "$RUNS" -- bin/hello \
	-- bin/warden --home "$home" check trade buy WETH --param chain=base --param amount_usd=1 --dry-run \
	-- bin/warden --home "$home" check tool call get_price

echo
# The sandbox start per command, beside bubblewrap and Codex's sandbox, and
# the whole hook path (its own script, also runnable alone).
./scripts/bench_sandbox.sh

echo
# The egress proxy beside smokescreen, squid and tinyproxy (its own script,
# also runnable alone).
./scripts/bench_proxy.sh

echo
# One-shot decisions with the default policy and with 1,000 filesystem and
# 1,000 network rules more (its own script, also runnable alone).
./scripts/bench_policy.sh
