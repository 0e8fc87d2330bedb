package shellguard

import (
	"fmt"
	"strings"
	"sync"

	"github.com/agentwarden/warden"
)

// handler classifies one command of a known program.
type handler func(*cmdCtx)

var (
	specsOnce  sync.Once
	specs      map[string]handler
	grammarSrc map[string]string // option grammars, compiled on first use

	gramMu   sync.Mutex
	grammars map[string]*grammar // the compiled ones so far
)

// lookupSpec returns the handler for a program name, or nil.
func lookupSpec(name string) handler {
	specsOnce.Do(buildSpecs)
	return specs[name]
}

// gram returns the compiled grammar of a program, or nil. Each grammar is
// compiled the first time it is needed: a one-shot process (a hook) judges one
// command, and compiling every grammar up front cost it more than the judging.
func gram(name string) *grammar {
	specsOnce.Do(buildSpecs)
	gramMu.Lock()
	defer gramMu.Unlock()
	if g, ok := grammars[name]; ok {
		return g
	}
	src, ok := grammarSrc[name]
	if !ok {
		return nil
	}
	g := compileGrammar(src)
	grammars[name] = g
	return g
}

// readOnlyPrograms read files and print; their arguments are data. The
// lists below are space-separated; a name ending in "_" is deliberately
// left out (it writes, runs code, or has its own handler) and is listed
// only so that a reader sees it was considered.
const readOnlyPrograms = `
	mktemp git-lfs ls ll la dir vdir tree pwd whoami id groups hostname uname date cal uptime w who users last lastlog
	cat tac head tail less more most bat batcat nl wc cut paste join comm uniq fold fmt column expand unexpand
	grep egrep fgrep rg ag ack zgrep zcat bzcat xzcat zless lz4cat file stat du df free lsblk lscpu lsusb lspci
	lsmod findmnt mount blkid diff diff3 cmp sdiff md5sum sha1sum sha256sum sha512sum b2sum cksum sum
	basename dirname realpath readlink which whereis type command hash alias help man info apropos whatis tldr
	printenv_ echo printf true false test [ yes seq factor expr bc dc jq yq gojq xq fx od hexdump xxd strings
	base32 base64 ps pgrep pstree top htop btop atop iotop vmstat iostat mpstat sar nproc getconf locale
	tput tty stty_ env_ sleep wait jobs fg bg history dirs pushd popd cd export unset set_ read local declare
	typeset readonly shift getopts trap umask ulimit times let return exit break continue : source_ true
	rev tr sort_ nslookup dig host whois ping traceroute tracepath mtr ss netstat ip_ ifconfig_ arp route_
	lsof fuser pidof sensors dmesg journalctl_ timedatectl_ hostnamectl_ localectl_ awk_ gawk_ mawk_ sed_
	git-lfs_ go_ gofmt_ node_ python_ shellcheck hadolint yamllint jsonlint eslint prettier_ tsc black_
	ruff_ mypy pylint flake8 golangci-lint staticcheck gopls clippy cloc tokei scc wc jless glow mdcat
	tldr cheat numfmt shuf_ tsort ptx csplit_ split_ iconv dos2unix_ unix2dos_ cowsay figlet lolcat
	look ldd nm objdump readelf size strip_ file xdg-open_ open_ sw_vers system_profiler defaults_ mdfind
	locate plocate mlocate pwdx getent id cut tee_ watch_ fc_ vim_ vi_ nano_ emacs_ code_ echo dpkg-query`

// dataPrograms run nothing and write nothing: every argument is data.
const dataPrograms = `echo printf true false : test [ [[ ]] sleep cd pushd popd dirs export unset
	local declare typeset readonly shift getopts trap umask let return exit break continue wait jobs
	set read alias hash type which whereis command help man info apropos whatis tldr history times
	ulimit fg bg disown basename dirname seq yes expr clear reset logout shopt complete compgen`

// taskRunners run project-controlled code the guard cannot see.
const taskRunners = `make gmake cmake ctest ninja meson bazel bazelisk buck just task mage
	gradle gradlew mvn mvnw sbt lein ant rake bundle pytest tox nox jest vitest mocha ava karma
	playwright cypress tsx ts-node deno_ bun_ turbo nx lerna rush vite webpack rollup esbuild parcel
	next nuxt astro swift dotnet mix elixir rebar3 stack cabal dune zig tsc eslint prettier black ruff
	isort go_ cargo_ rustc gcc g++ cc clang clang++ javac kotlinc scalac ghc ocaml nim crystal
	npm_ pnpm_ yarn_ pip_ pip3_ uv_ poetry_ pipenv_ composer_ hatch pdm rye conda_ mamba_ air reflex
	pre-commit_ lefthook_ husky_ golangci-lint goreleaser_ protoc buf sqlc wire mockgen stringer templ
	hugo jekyll mkdocs sphinx-build docusaurus storybook`

// destructivePrograms are names whose presence as an argument of an unknown
// program suggests it runs them.
var destructivePrograms = setOf("rm", "shred", "dd", "mkfs", "wipefs", "git", "rmdir", "unlink", "truncate", "find", "chmod", "chown")

func buildSpecs() {
	specs = map[string]handler{}
	grammarSrc = map[string]string{}
	grammars = map[string]*grammar{}
	for _, n := range strings.Fields(readOnlyPrograms + " " + dataPrograms) {
		if !strings.HasSuffix(n, "_") {
			specs[n] = allowAll
		}
	}
	for _, n := range strings.Fields(taskRunners) {
		if !strings.HasSuffix(n, "_") {
			specs[n] = taskRunner
		}
	}
	gitSubs = gitSubTable()
	for name, src := range grammarTable() {
		grammarSrc[name] = src
	}
	for name, h := range handlerTable() {
		specs[name] = h
	}
}

func allowAll(*cmdCtx) {}

func taskRunner(cc *cmdCtx) {
	switch cc.name {
	case "make", "gmake", "just", "task", "mage", "rake":
		for _, a := range cc.args {
			if !a.Dynamic && !strings.HasPrefix(a.Value, "-") && !strings.Contains(a.Value, "=") && isDeployTarget(a.Value) {
				cc.leaves(fmt.Sprintf("%s %s may deploy, publish or push beyond this machine", cc.name, a.Value))
				return
			}
		}
	}
	if cc.c.p.AllowTaskRunners {
		return
	}
	cc.say(warden.Sandbox, "shell.task_runner", fmt.Sprintf("%s runs project code; the strict policy sandboxes task runners", cc.name))
}

// deployWords are the words of a target or script name that say it acts
// beyond this machine.
var deployWords = setOf("deploy", "deployment", "release", "publish", "upload", "push", "destroy", "ship")

// isDeployTarget reports a make target or package script whose name has a
// deploy word ("deploy", "release-prod", "docker:push"), unless it only
// builds ("build-release").
func isDeployTarget(t string) bool {
	words := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	hit := false
	for _, w := range words {
		if w == "build" || w == "dist" || w == "dry" {
			return false
		}
		hit = hit || deployWords.has(w)
	}
	return hit
}

// parse splits the command's arguments by the program's grammar. A closed
// spec with an option it does not know, or an ambiguous abbreviation, gets
// ask: it may be a spelling the guard failed to resolve.
func (cc *cmdCtx) parse(name string, closed bool) parsed {
	g := gram(name)
	if g == nil {
		g = &grammar{}
	}
	p := parseArgs(g, cc.args, false)
	if closed && (len(p.unknown) > 0 || p.ambiguous) {
		cc.say(warden.Ask, "shell.unknown_option", fmt.Sprintf("%s was given options the guard does not know (%s)", cc.name, strings.Join(p.unknown, " ")))
	}
	return p
}
