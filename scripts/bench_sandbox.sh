#!/usr/bin/env bash
# Sandbox start per command, side by side in one run: bare execution,
# bubblewrap, Codex's sandbox (npm @openai/codex, its native binary), warden
# exec in the workspace profile (one-shot, and in a session's sandbox) and the
# guard profile, and the whole hook path as an agent host runs it (warden hook claude, then the rewritten command with
# bash -c). Each command runs three times over: /bin/true, id -u (one program
# on $PATH) and bash -c 'echo hi | wc -c'.
#
# hyperfine cannot interleave its commands, so the run is ROUNDS rounds of
# every command (RUNS/ROUNDS runs each, order rotated each round) and the
# figures are over the merged samples. Called by `make bench`; alone:
#
#	scripts/bench_sandbox.sh            # RUNS=300 ROUNDS=20 WARMUP=3 GAP=0
#
# GAP=0.02 sleeps 20 ms before every timed run (hyperfine --prepare), for
# every row alike: an agent's commands come seconds apart, not back to back,
# and what a long-lived process prepares after one command (a session's
# supervisor starts the next one-shot sandbox's init) is then ready.
#
# Figures go to docs/benchmarks.md ("Sandbox start per command").
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-300}
ROUNDS=${ROUNDS:-20}
WARMUP=${WARMUP:-3}
GAP=${GAP:-0}
CODEX_VERSION=${CODEX_VERSION:-0.171.0}
CACHE=${CACHE:-$PWD/bin/cache}
OUT=bin/sandbox-bench

need() { # need COMMAND DEBIAN-PACKAGE
	command -v "$1" >/dev/null && return
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y "$2" >/dev/null; }
	else
		echo "bench_sandbox: $1 is missing; install it with: sudo apt-get install -y $2" >&2; exit 1
	fi
}
need hyperfine hyperfine
need bwrap bubblewrap
need python3 python3

make --no-print-directory build >/dev/null
go build -o bin/hostrun ./bench/sandbox
rm -rf "$OUT" && mkdir -p "$OUT"

# Codex, pinned, into the build directory (bin/ is ignored). Its native binary
# is run directly, not through node. It refuses to put its helper links under
# /tmp, so CODEX_HOME lives in the cache too. When it cannot be installed the
# run goes on without it and says why.
codex=
codex_why=
if ! command -v npm >/dev/null; then
	codex_why="npm is not installed"
else
	npmdir=$CACHE/npm-hosts
	if [ "$(cat "$npmdir/.codex-version" 2>/dev/null)" != "$CODEX_VERSION" ]; then
		mkdir -p "$npmdir"
		if npm install --prefix "$npmdir" --no-audit --no-fund --no-save "@openai/codex@$CODEX_VERSION" >"$OUT/npm.log" 2>&1; then
			echo "$CODEX_VERSION" >"$npmdir/.codex-version"
		else
			codex_why="npm install @openai/codex@$CODEX_VERSION failed: $(tail -1 "$OUT/npm.log")"
		fi
	fi
	if [ -z "$codex_why" ]; then
		codex=$(find "$npmdir/node_modules/@openai" -path '*/vendor/*/bin/codex' -type f 2>/dev/null | head -1)
		[ -x "$codex" ] || { codex=; codex_why="@openai/codex@$CODEX_VERSION has no native binary for $(uname -m) linux"; }
	fi
	if [ -n "$codex" ]; then
		export CODEX_HOME=$CACHE/codex-home
		mkdir -p "$CODEX_HOME"
		# Codex refuses its daemon's socket directory unless it is 0700; one
		# an earlier run left with another mode (made under another umask)
		# is set right when it is ours.
		daemon_dir=/tmp/codex-daemon-$(id -u)
		[ ! -d "$daemon_dir" ] || [ ! -O "$daemon_dir" ] || chmod 700 "$daemon_dir"
		# Codex's workspace-write mode (what --full-auto selected).
		codex_run="$codex sandbox -c sandbox_mode=workspace-write --"
		if ! (cd /tmp && $codex_run /bin/true) >"$OUT/codex-probe.log" 2>&1; then
			codex_why="codex sandbox cannot run here: $(tail -1 "$OUT/codex-probe.log")"
			codex=
		fi
	fi
fi
[ -n "$codex" ] || echo "bench_sandbox: Codex left out: $codex_why" >&2

# A fresh home and a project beside it, both under /tmp: the default policy
# denies /var (so not /var/tmp), and the project must not lie in the home.
home=$(mktemp -d /tmp/warden-bench-home.XXXXXX)
proj=$(mktemp -d /tmp/warden-bench-proj.XXXXXX)
home1=$(mktemp -d /tmp/warden-bench-home1.XXXXXX)
w=$PWD/bin/warden
hr=$PWD/bin/hostrun
stop_all() { # the session sandboxes the run started, then the directories
	"$w" --home "$home" sandbox status --json 2>/dev/null |
		python3 -c 'import json,sys; [print(x["name"]) for x in json.load(sys.stdin) or [] if x.get("state") != "stopped"]' 2>/dev/null |
		while read -r name; do "$w" --home "$home" sandbox stop "$name" >/dev/null 2>&1 || true; done
	rm -rf "$home" "$home1" "$proj"
}
trap stop_all EXIT
"$w" --home "$home" init >/dev/null
# A second home where every one-shot run builds a sandbox of its own
# (sandbox.keep_one_shot false): the start a kept sandbox spares.
"$w" --home "$home1" init >/dev/null
"$w" --home "$home1" config set sandbox.keep_one_shot false >/dev/null

names=() cmds=()
add() { names+=("$1"); cmds+=("$2"); }
# Three workloads: /bin/true (a path: the hook keeps its bash -c), one
# program found on $PATH with plain words (the hook passes it without a
# bash), and a pipeline.
for wl in true prog pipe; do
	case $wl in
	true) c=/bin/true sc=/bin/true ;;
	prog) c="id -u" sc="id -u" ;;
	pipe) c="bash -c 'echo hi | wc -c'" sc='echo hi | wc -c' ;;
	esac
	add "$wl: bare" "$c"
	add "$wl: bwrap" "bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc $c"
	[ -z "$codex" ] || add "$wl: codex sandbox" "$codex_run $c"
	# One-shot (no session): the run goes to the supervisor of the sandbox
	# kept for this directory's one-shot runs (started after the first, in
	# the warm-up), which runs it alone in that sandbox; and, with
	# keep_one_shot false, in a sandbox built for it. With a session (what
	# the hook's rewrite passes) the command runs in the session's
	# long-lived sandbox, started by the first command (the warm-up).
	add "$wl: warden exec workspace" "$w --home $home exec --profile workspace -- $c"
	add "$wl: warden exec ws, own sandbox" "$w --home $home1 exec --profile workspace -- $c"
	add "$wl: warden exec ws --session" "$w --home $home exec --profile workspace --session S -- $c"
	# What the hooks write: warden-exec hands the run to the session's
	# supervisor, which decides and runs it (no warden start of its own).
	add "$wl: warden-exec --session" "$PWD/bin/warden-exec $w --home $home exec --profile workspace --session S -- $c"
	# guard forbids creating processes (no_spawn), so it cannot run a pipeline.
	[ $wl != true ] || add "$wl: warden exec guard" "$w --home $home exec --profile guard -- $c"
	# What the hooks write for a sandbox verdict: a one-shot guard sandbox,
	# run by the session's supervisor (which keeps its next init ready).
	[ $wl = pipe ] || add "$wl: warden-exec guard --session" "$PWD/bin/warden-exec $w --home $home exec --profile guard --session S -- $c"
	add "$wl: host bare" "$hr -command '$sc'"
	add "$wl: host + hook only" "$hr -warden $w -home $home -session S -hook-only -command '$sc'"
	add "$wl: host + warden hook" "$hr -warden $w -home $home -session S -command '$sc'"
done

per=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
n=${#names[@]}
prepare=()
[ "$GAP" = 0 ] || prepare=(--prepare "sleep $GAP")
echo "== sandbox start per command: $n commands, $ROUNDS rounds of $per runs (hyperfine -N --warmup $WARMUP${prepare:+, a ${GAP}s gap before each run}), from $proj"
for ((r = 0; r < ROUNDS; r++)); do
	args=()
	for ((i = 0; i < n; i++)); do
		j=$(( (i + r) % n ))
		args+=(-n "${names[j]}" "${cmds[j]}")
	done
	(cd "$proj" && hyperfine -N --style none --warmup "$WARMUP" --runs "$per" "${prepare[@]}" \
		--export-json "$OLDPWD/$OUT/round-$r.json" "${args[@]}" >/dev/null 2>"$OLDPWD/$OUT/round-$r.log") ||
		{ cat "$OUT/round-$r.log" >&2; exit 1; }
	echo "round $((r + 1))/$ROUNDS done"
done

{
	echo "kernel $(uname -r), $(nproc) CPUs, $(bwrap --version)${codex:+, codex $CODEX_VERSION}, gap before each run ${GAP}s"
	[ -n "$codex" ] || echo "codex: left out: $codex_why"
	for ((i = 0; i < n; i++)); do echo "cmd ${names[i]} | ${cmds[i]}"; done
} >"$OUT/commands.txt"
python3 - "$OUT" <<'PY'
import glob, json, math, statistics as st, sys
out = sys.argv[1]
t = {}
for f in sorted(glob.glob(f"{out}/round-*.json")):
    for x in json.load(open(f))["results"]:
        t.setdefault(x["command"], []).extend(x["times"])
med = {k: st.median(v) * 1e3 for k, v in t.items()}
def p90(v):
    s = sorted(v); return s[min(len(s) - 1, int(0.9 * len(s)))] * 1e3
def base(k):  # what a row's added latency is measured against
    wl = k.split(":")[0]
    return f"{wl}: host bare" if ": host" in k else f"{wl}: bare"
def added(k):
    return med[k] - med[base(k)] if k in med else math.nan
L = [f"{'command':30s} {'n':>4s} {'median':>7s} {'p90':>7s} {'mean ± sd':>15s} {'added':>7s}  (ms)"]
wls = ["true", "prog", "pipe"]
order = sorted(t, key=lambda k: (wls.index(k.split(":")[0]) if k.split(":")[0] in wls else 9, list(t).index(k)))
for k in order:
    v = t[k]
    L.append(f"{k:30s} {len(v):4d} {med[k]:7.2f} {p90(v):7.2f} {st.mean(v)*1e3:7.2f} ± {st.stdev(v)*1e3:5.2f} {added(k):7.2f}")
L += ["", "added = the row's median − its baseline's (bare; the host rows: host bare)"]
ok = lambda c: "met" if c else "NOT met"
for wl in ("true", "prog", "pipe"):
    a = lambda name: added(f"{wl}: {name}")
    hook, sess, one, bw, cx = a("host + warden hook"), a("warden-exec --session"), a("warden exec workspace"), a("bwrap"), a("codex sandbox")
    L.append(f"{wl}: added per command: hook path {hook:.2f} ms (the hook alone {a('host + hook only'):.2f}),"
             f" warden-exec --session {sess:.2f} ms (warden exec --session {a('warden exec ws --session'):.2f})"
             f" [target ≤ 10 ms: hook path {ok(hook <= 10)}, exec {ok(sess <= 10)}]")
    if not math.isnan(cx):
        L.append(f"{wl}: codex added {cx:.2f} ms; hook path / codex {hook/cx:.2f}, warden-exec --session / codex {sess/cx:.2f}"
                 f" [target ≤ 0.25: hook path {ok(hook/cx <= 0.25)}, exec {ok(sess/cx <= 0.25)}]")
    L.append(f"{wl}: one-shot start (exec workspace − bare) / (bwrap − bare) = {one:.2f} / {bw:.2f} = {one/bw:.2f}x [target ≤ 2x: {ok(one/bw <= 2)}]")
    own = a("warden exec ws, own sandbox")
    L.append(f"{wl}: one-shot start in a sandbox of its own (keep_one_shot false) = {own:.2f} / {bw:.2f} = {own/bw:.2f}x")
    served = a("warden-exec guard --session")
    if not math.isnan(served):
        L.append(f"{wl}: one-shot start served by the session's supervisor (warden-exec guard --session − bare) / (bwrap − bare)"
                 f" = {served:.2f} / {bw:.2f} = {served/bw:.2f}x [target ≤ 2x: {ok(served/bw <= 2)}]")
open(f"{out}/summary.txt", "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
echo "(samples: $OUT/round-*.json; commands: $OUT/commands.txt)"
