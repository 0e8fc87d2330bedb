#!/usr/bin/env bash
# Flat in policy size (issue 26): one-shot `warden check` decisions with the
# default policy and with 1,000 filesystem and 1,000 network rules more
# (half allowed, half denied, as app.BenchmarkOneShotPolicySize adds them,
# under a home where the directories they name exist), for a shell command, a network fetch and a file read. hyperfine cannot
# interleave commands, so the run is ROUNDS rounds of every command (RUNS
# runs each in all), and the figures are over the merged samples: the median
# wall time and the median CPU time (user + system) per run, and each big
# policy's ratio to the default's (target: at most 1.2).
#
#	scripts/bench_policy.sh            # RUNS=300 ROUNDS=10 RULES=2000
#	WARDEN=path/to/other/warden scripts/bench_policy.sh   # another build
#
# Figures go to docs/benchmarks.md ("Flat in policy size").
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-300}
ROUNDS=${ROUNDS:-10}
RULES=${RULES:-2000}
OUT=bin/policy-bench
WARDEN=${WARDEN:-bin/warden}

if ! command -v hyperfine >/dev/null; then
	if [ "$(id -u)" = 0 ]; then apt-get install -y hyperfine >/dev/null; else
		echo "bench_policy: hyperfine is missing; install it with: sudo apt-get install -y hyperfine" >&2; exit 1; fi
fi
[ -x "$WARDEN" ] || CGO_ENABLED=0 go build -trimpath -o "$WARDEN" ./cmd/warden
WARDEN=$(realpath "$WARDEN")
rm -rf "$OUT" && mkdir -p "$OUT"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/warden-policy-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The rules name directories in the user's home; they exist, as in a real
# policy (compiling reads the directories that hold them).
export HOME=$work/user
mkdir -p "$HOME/projects" "$HOME/private"
(cd "$HOME/projects" && seq -f 'p%.0f' 0 $(( RULES / 2 - 1 )) | xargs mkdir)
(cd "$HOME/private" && seq -f 'd%.0f' 0 $(( RULES - RULES / 2 - 1 )) | xargs mkdir)
# The compiled-rules cache (fsguard.NewCached) keeps what was read of a
# directory only once it has been still for a second; a real policy's are
# older. Without the wait the first few runs would compile.
sleep 1.1
for h in default big; do "$WARDEN" --home "$work/$h" init >/dev/null; done
python3 - "$work/big/warden.yaml" "$RULES" <<'PY'
import re, sys
path, n = sys.argv[1], int(sys.argv[2])
s = open(path).read()
half = n // 2
rules = "".join(f'    - path: "~/projects/p{i}/**"\n      actions: [read, list]\n      level: auto\n' for i in range(half))
s = s.replace("  allowed_paths:\n", "  allowed_paths:\n" + rules, 1)
lst = lambda fmt, k: ", ".join(fmt % i for i in range(k))
s = re.sub(r"(?m)^  denied_paths: \[", lambda m: "  denied_paths: [" + lst('"~/private/d%d/**"', n - half) + ", ", s, count=1)
s = re.sub(r"(?m)^  allowed_domains: \[", lambda m: "  allowed_domains: [" + lst("api%d.example.com", half) + ", ", s, count=1)
s = re.sub(r"(?m)^  denied_domains: \[\]", lambda m: "  denied_domains: [" + lst('"*.bad%d.example.net"', n - half) + "]", s, count=1)
open(path, "w").write(s)
PY
"$WARDEN" --home "$work/big" config validate >/dev/null
mkdir -p "$work/project" && echo hello >"$work/project/a.txt"
cd "$work/project"
declare -A cmd=(
	[shell]="check shell exec ls"
	[network]="check network fetch https://github.com/x"
	[filesystem]="check filesystem read a.txt"
)
names=()
for h in default big; do
	for c in shell network filesystem; do
		"$WARDEN" --home "$work/$h" ${cmd[$c]} >/dev/null # writes the policy cache
		names+=("$h/$c")
	done
done
per=$(( RUNS / ROUNDS ))
for r in $(seq 1 "$ROUNDS"); do
	args=()
	for n in "${names[@]}"; do
		args+=(-n "$n" "$WARDEN --home $work/${n%/*} ${cmd[${n#*/}]}")
	done
	hyperfine -N --warmup 3 --runs "$per" --export-json "$OLDPWD/$OUT/round-$r.json" "${args[@]}" >/dev/null
done
cd "$OLDPWD"
python3 - "$OUT" <<'PY'
import glob, json, statistics, sys
runs = {}
for f in sorted(glob.glob(sys.argv[1] + "/round-*.json")):
    for r in json.load(open(f))["results"]:
        d = runs.setdefault(r["command"], {"wall": [], "cpu": []})
        d["wall"] += r["times"]
        d["cpu"] += [u + s for u, s in zip(r["user"], r["system"])] if isinstance(r.get("user"), list) else [r["user"] + r["system"]] * len(r["times"])
med = {k: (statistics.median(v["wall"]) * 1e3, statistics.median(v["cpu"]) * 1e3, len(v["wall"])) for k, v in runs.items()}
print(f"{'command':24s} {'wall median':>12s} {'cpu median':>11s} {'runs':>5s}  big/default (wall, cpu)")
for k, (w, c, n) in med.items():
    ratio = ""
    if k.startswith("big/"):
        dw, dc, _ = med["default/" + k[4:]]
        ratio = f"  {w / dw:4.2f}x  {c / dc:4.2f}x"
    print(f"{k:24s} {w:9.2f} ms {c:8.2f} ms {n:5d}{ratio}")
PY
