package shellguard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

func toolHandlers(t map[string]handler) {
	t["warden"] = hWarden
	t["warden-exec"] = hWardenExec
	networkHandlers(t)
	leavingHandlers(t)
	t["env"] = func(cc *cmdCtx) {
		if len(cc.args) == 0 || allFlags(cc.args) {
			cc.c.markSecretRead(cc.cmd)
		}
	}
	t["printenv"] = func(cc *cmdCtx) { cc.c.markSecretRead(cc.cmd) }
	t["set"] = func(cc *cmdCtx) {
		if len(cc.args) == 0 {
			cc.c.markSecretRead(cc.cmd)
		}
	}
	// export, declare and typeset print the variables (and so the
	// secrets in them) with no operand or only options (export -p); with
	// a NAME=VALUE they set it and print nothing.
	t["export"] = func(cc *cmdCtx) {
		if (len(cc.args) == 0 || allFlags(cc.args)) && len(cc.cmd.Assigns) == 0 {
			cc.c.markSecretRead(cc.cmd)
		}
	}
	t["declare"] = t["export"]
	t["typeset"] = t["export"]
	t["docker"] = hContainer
	t["podman"] = hContainer
	t["nerdctl"] = hContainer
	t["kubectl"] = hKubectl
	t["oc"] = hKubectl
	t["helm"] = func(cc *cmdCtx) {
		switch firstOperand(cc) {
		case "show", "template", "lint", "version", "search", "repo", "env", "dependency", "help", "create", "package", "verify", "completion", "":
			return
		case "list", "ls", "status", "get", "history":
			cc.needsHost("helm " + firstOperand(cc) + " reads the cluster with the credentials in ~/.kube, which the sandbox masks")
		case "uninstall", "delete", "rollback":
			cc.say(warden.Ask, "shell.infra.helm", "helm "+firstOperand(cc)+" changes a cluster").destructive = true
		default:
			cc.leaves("helm " + firstOperand(cc) + " changes a cluster")
		}
	}
	t["terraform"] = hTerraform
	t["tofu"] = hTerraform
	t["pulumi"] = hTerraform
	t["aws"] = hCloud
	t["gcloud"] = hCloud
	t["az"] = hCloud
	t["gsutil"] = hCloud
	t["doctl"] = hCloud
	t["gh"] = hForgeCLI
	t["glab"] = hForgeCLI
	for _, n := range []string{"npm", "pnpm", "yarn", "bun"} {
		t[n] = hNodePkg
	}
	for _, n := range []string{"npx", "pnpx", "bunx"} {
		t[n] = hPackageRunner
	}
	t["pip"] = hPip
	t["pip3"] = hPip
	t["uv"] = hPip
	t["go"] = func(cc *cmdCtx) {
		switch firstOperand(cc) {
		case "install":
			goInstall(cc)
		case "env":
			if hasArg(cc.args, "-w", "-u") && !cc.assignedInside("GOENV") {
				userConfig(cc, "go env -w writes go's own settings (~/.config/go/env: GOFLAGS, GOPROXY, CC, GOTOOLCHAIN) for every go command the host runs later", "GOFLAGS=… go test …, or export GOFLAGS=… for this line")
				return
			}
		case "telemetry":
			if ops := operandValues(cc.args); len(ops) > 1 {
				userConfig(cc, "go telemetry "+ops[1]+" writes go's telemetry mode in ~/.config/go", "")
				return
			}
		}
		subRunner(cc, "build test run vet fmt mod generate install list env version doc fix tool clean work get bug help telemetry")
	}
	// Git hook installers point git at the project's hook scripts
	// (core.hooksPath) or write them into .git/hooks; their other
	// subcommands run the project's hooks or add hook files to it.
	hookInstaller := func(installs ...string) handler {
		return func(cc *cmdCtx) {
			sub := firstOperand(cc)
			if slices.Contains(installs, sub) {
				gitHooksInstall(cc, strings.TrimSpace(cc.name+" "+sub))
				return
			}
			taskRunner(cc)
		}
	}
	t["husky"] = hookInstaller("", "init", "install", "uninstall") // v9 sets the hooks path with no subcommand
	t["pre-commit"] = hookInstaller("install", "uninstall", "init-templatedir")
	t["lefthook"] = hookInstaller("install", "uninstall", "add")
	t["simple-git-hooks"] = func(cc *cmdCtx) { gitHooksInstall(cc, cc.name) }
	t["corepack"] = func(cc *cmdCtx) {
		switch firstOperand(cc) {
		case "enable", "disable", "install":
			for i, a := range cc.args {
				v, ok := strings.CutPrefix(a.Value, "--install-directory=")
				if !ok && a.Value == "--install-directory" && i+1 < len(cc.args) {
					v, ok = cc.args[i+1].Value, !cc.args[i+1].Dynamic
				}
				if ok && !a.Dynamic {
					switch cc.zone(walk.Word{Value: v}) {
					case ZoneWorkspaceOther, ZoneWorkspaceArtifact, ZoneWorkspaceRoot, ZoneTemp:
						return
					}
				}
			}
			installHost(cc, "corepack "+firstOperand(cc)+" writes package managers' programs beside node's", "corepack pnpm …, or npx pnpm …")
		default:
			taskRunner(cc)
		}
	}
	t["cargo"] = func(cc *cmdCtx) {
		if firstOperand(cc) == "install" && !hasArg(cc.args, "--root") && !hasPrefixArg(cc.args, "--root=") {
			installHost(cc, "cargo install writes the binary to ~/.cargo/bin", "cargo build --release, or cargo install --root ./tools …")
		}
		if firstOperand(cc) == "publish" || firstOperand(cc) == "yank" || firstOperand(cc) == "login" || firstOperand(cc) == "owner" {
			cc.leaves("cargo " + firstOperand(cc) + " changes a package registry")
			return
		}
		taskRunner(cc)
	}
	for _, n := range []string{"psql", "mysql", "mariadb", "sqlite3", "mongo", "mongosh", "redis-cli", "clickhouse-client", "cqlsh", "duckdb"} {
		t[n] = hDatabase
	}
	t["xargs"] = func(cc *cmdCtx) {} // Walk unwraps xargs; a bare xargs runs echo
	t["parallel"] = func(cc *cmdCtx) {
		if len(cc.args) > 0 {
			cc.say(warden.Ask, "shell.parallel", "parallel runs commands assembled at run time")
		}
	}
	t["tar"] = func(cc *cmdCtx) {
		for i, a := range cc.args {
			if (a.Value == "-C" || a.Value == "--directory") && i+1 < len(cc.args) {
				cc.effect(EffWrite, cc.args[i+1])
			} else if v, ok := strings.CutPrefix(a.Value, "--directory="); ok {
				cc.effect(EffWrite, walk.Word{Value: v})
			}
		}
	}
	for _, n := range []string{"vim", "vi", "nvim", "ex", "view", "vimdiff", "nano", "emacs", "code", "open", "xdg-open"} {
		t[n] = hEditor
	}
	// Terminal multiplexers run whatever command they are given.
	for _, n := range []string{"screen", "tmux"} {
		t[n] = func(cc *cmdCtx) {
			switch firstOperand(cc) {
			case "", "ls", "list-sessions", "attach", "attach-session", "a", "-ls", "-r", "list-windows", "lsw", "has-session", "has",
				"kill-session", "detach", "capture-pane", "capturep", "list-panes", "lsp", "list-clients", "lsc", "list-buffers",
				"lsb", "show-buffer", "showb", "display-message", "display", "show-options", "show", "show-window-options",
				"showw", "show-environment", "showenv", "kill-server", "kill-window", "killw", "kill-pane", "killp",
				"select-window", "selectw", "select-pane", "selectp", "resize-pane", "resizep", "rename-window", "renamew",
				"rename-session", "rename", "wait-for", "wait":
				return // they read a session, or end or arrange its windows
			}
			if cc.name == "tmux" && (tmuxNew(cc) || tmuxSendKeys(cc)) {
				return
			}
			cc.say(warden.Ask, "shell.multiplexer", cc.name+" runs a command the guard does not parse")
		}
	}
	// Walk unwraps these or recurses into their code; issues cover the rest.
	for _, n := range []string{"eval", "exec", "builtin", "nohup", "time", "timeout", "nice", "stdbuf", "watch"} {
		t[n] = func(cc *cmdCtx) {}
	}
	// source FILE runs a script in the current shell: project code.
	for _, n := range []string{"source", "."} {
		t[n] = func(cc *cmdCtx) {
			if len(cc.args) == 0 || cc.cmd.Via != "" && strings.HasPrefix(cc.cmd.Via, "source") {
				return
			}
			a := cc.args[0]
			if a.Dynamic {
				return // source <(…) and /dev/stdin are walked; unknown code is an issue
			}
			switch cc.zone(a) {
			case ZoneWorkspaceArtifact, ZoneWorkspaceOther:
				taskRunner(cc)
			case ZoneNull:
			default:
				cc.unseen("shell.source", cc.name+" "+a.Value+" runs a script the guard cannot see")
			}
		}
	}
	t["trap"] = func(cc *cmdCtx) {}
	t["awk"] = hAwk
	readHandlers(t) // last: it wraps handlers set above (tar's)
}

func allFlags(ws []walk.Word) bool {
	for _, w := range ws {
		if !strings.HasPrefix(w.Value, "-") {
			return false
		}
	}
	return true
}

func operandValues(ws []walk.Word) []string {
	var out []string
	for _, w := range ws {
		if !strings.HasPrefix(w.Value, "-") {
			out = append(out, w.Value)
		}
	}
	return out
}

// goInstall asks about go install unless the line sets GOBIN to a
// directory of the project or a temp directory: go puts the binary in
// GOBIN, by default ~/go/bin, a directory the host runs programs from
// (it is on the user's PATH). The workspace sandbox keeps it read-only, so
// that an agent cannot plant a program there that the user later runs
// outside any sandbox, and go install fails there; a human may run it on
// the host instead, or the agent may name a GOBIN it can write.
func goInstall(cc *cmdCtx) {
	for _, a := range cc.cmd.Assigns {
		if a.Name == "GOBIN" {
			switch cc.zone(a.Value) {
			case ZoneWorkspaceOther, ZoneWorkspaceArtifact, ZoneWorkspaceRoot, ZoneTemp:
				return
			}
		}
	}
	f := cc.say(warden.Ask, "shell.install_host", "go install writes the binary to GOBIN (by default ~/go/bin), where the host runs programs from, which the workspace sandbox keeps read-only; a human may run it on the host")
	f.suggestion = "GOBIN=$PWD/bin go install …, or go build -o bin/NAME"
}

// gitHooksInstall asks about a git hook installer (husky, pre-commit
// install, lefthook install): it makes git on the host run the project's
// hook scripts at the user's next commit, outside any sandbox, so the
// workspace sandbox keeps .git/config and .git/hooks read-only and the
// install would fail there (husky even exits 0 with its hooks unset); a
// human may run it on the host.
func gitHooksInstall(cc *cmdCtx, what string) {
	cc.say(warden.Ask, "shell.git_hooks_install", what+" sets git hooks that git on the host runs at the user's next commit; the workspace sandbox keeps .git/config and .git/hooks read-only, and a human may run it on the host")
}

// userConfig asks about a tool writing the user's own configuration
// outside the project (go env -w, npm config set, pip config set), which
// the host's later commands read: the workspace sandbox keeps it
// read-only (or masks it), so the write would fail there; a human may run
// it on the host.
func userConfig(cc *cmdCtx, what, instead string) {
	f := cc.say(warden.Ask, "shell.user_config", what+"; the workspace sandbox keeps it read-only, and a human may run it on the host")
	f.suggestion = instead
}

// followedBy reports whether one of opts is followed, as the next word, by
// value (--location project).
func followedBy(args []walk.Word, value string, opts ...string) bool {
	for i := 0; i+1 < len(args); i++ {
		if slices.Contains(opts, args[i].Value) && args[i+1].Value == value && !args[i+1].Dynamic {
			return true
		}
	}
	return false
}

// assignedInside reports whether the line sets the variable name, before
// this command, to a directory of the project or a temporary one.
func (cc *cmdCtx) assignedInside(name string) bool {
	for _, a := range cc.cmd.Assigns {
		if a.Name == name {
			switch cc.zone(a.Value) {
			case ZoneWorkspaceOther, ZoneWorkspaceArtifact, ZoneWorkspaceRoot, ZoneTemp:
				return true
			}
		}
	}
	return false
}

// installHost asks about a package install into the user's or the
// system's programs (npm install -g, pip install --user, cargo install),
// which the host runs from its PATH: as with go install, the workspace
// sandbox keeps those directories read-only, so the install would fail
// there; a human may run it on the host.
func installHost(cc *cmdCtx, what, instead string) {
	f := cc.say(warden.Ask, "shell.install_host", what+", where the host runs programs from, which the workspace sandbox keeps read-only; a human may run it on the host")
	f.suggestion = instead
}

func subRunner(cc *cmdCtx, known string) {
	sub := firstOperand(cc)
	for _, k := range strings.Fields(known) {
		if k == sub {
			taskRunner(cc)
			return
		}
	}
	if sub == "" {
		return
	}
	cc.unseen("shell.unknown_subcommand", fmt.Sprintf("%s %s is not a known subcommand", cc.name, sub))
}

// containerReads are the docker (podman, nerdctl) subcommands that only
// read the daemon's state; containerMgmtReads are the second words that
// only read under a management command (image ls, compose ps…).
var (
	containerReads     = setOf("ps", "images", "logs", "inspect", "version", "info", "search", "history", "top", "stats", "port", "diff", "events", "help", "--help", "--version", "")
	containerMgmtReads = setOf("ls", "list", "inspect", "logs", "top", "stats", "port", "diff", "df", "info", "events", "history", "ps", "config", "images", "version", "show", "du", "help", "--help")
)

// hContainer: docker, podman and nerdctl act through a daemon that runs
// outside warden's sandbox, so every subcommand that acts (build, pull,
// compose up, push…) is asked about; reading the daemon's state is not.
// run and exec are unwrapped by Walk (their inner command is classified and
// asked about as run through the daemon); here the container options are
// judged.
func hContainer(cc *cmdCtx) {
	ops := operandValues(cc.args)
	sub := ""
	if len(ops) > 0 {
		sub = ops[0]
	}
	switch sub {
	case "run", "exec", "create":
		containerRun(cc)
	case "compose":
		if len(ops) > 1 && ops[1] == "down" && (hasArg(cc.args, "-v", "--volumes", "--rmi")) {
			cc.say(warden.Ask, "shell.container.volumes", "docker compose down -v deletes the project's volumes").destructive = true
			return
		}
	case "system", "volume", "image", "container", "network", "builder", "buildx":
		if len(ops) > 1 && (ops[1] == "prune" || ops[1] == "rm" || ops[1] == "remove") {
			cc.say(warden.Ask, "shell.container.prune", "docker "+sub+" "+ops[1]+" deletes containers, images or volumes").destructive = true
			return
		}
	case "rm", "rmi", "kill":
		cc.say(warden.Ask, "shell.container.remove", "docker "+sub+" removes containers or images")
		return
	}
	what := strings.Join(ops[:min(2, len(ops))], " ")
	switch {
	case sub == "" || sub == "help" || sub == "completion" || hasArg(cc.args, "--help", "-h") || len(ops) == 0 && hasArg(cc.args, "--version", "-v"):
	case containerReads.has(sub) || len(ops) > 1 && containerMgmtReads.has(ops[1]):
		cc.needsHost(cc.name + " " + what + " talks to the container daemon, which the sandbox cannot reach")
	default:
		cc.leaves(cc.name + " " + what + " acts through the container daemon, which runs outside warden's sandbox")
	}
}

func containerRun(cc *cmdCtx) {
	for i, a := range cc.args {
		v := a.Value
		if v == "--privileged" || strings.HasPrefix(v, "--pid=host") || strings.HasPrefix(v, "--cap-add") {
			cc.say(warden.Ask, "shell.container.privileged", "the container gets host privileges")
		}
		mount := ""
		if (v == "-v" || v == "--volume" || v == "--mount") && i+1 < len(cc.args) {
			mount = cc.args[i+1].Value
		} else if m, ok := strings.CutPrefix(v, "--volume="); ok {
			mount = m
		}
		if mount != "" {
			host, _, _ := strings.Cut(mount, ":")
			if zn := cc.z.path(host); zn == ZoneRoot || zn == ZoneSystem || zn == ZoneHomeRoot || zn == ZoneHomeSensitive {
				cc.say(warden.Ask, "shell.container.host_mount", fmt.Sprintf("the container mounts %s (%s) from the host", host, zn))
			}
		}
	}
}

func hKubectl(cc *cmdCtx) {
	ops := operandValues(cc.args)
	sub := ""
	if len(ops) > 0 {
		sub = ops[0]
	}
	switch sub {
	case "", "help", "completion", "kustomize":
		return
	case "version":
		if hasArg(cc.args, "--client") {
			return
		}
		cc.needsHost("kubectl " + sub + " reads the cluster with the credentials in ~/.kube, which the sandbox masks")
	case "get", "describe", "logs", "top", "explain", "cluster-info", "api-resources", "api-versions", "config", "auth", "diff", "events", "wait":
		cc.needsHost("kubectl " + sub + " reads the cluster with the credentials in ~/.kube, which the sandbox masks")
	case "delete":
		if hasArg(cc.args, "--all", "-A", "--all-namespaces") || len(ops) > 1 && (ops[1] == "namespace" || ops[1] == "ns" || ops[1] == "pv" || ops[1] == "node" || ops[1] == "crd") {
			cc.say(warden.Deny, "shell.infra.kubectl_delete_all", "kubectl delete of namespaces, nodes or --all deletes whole workloads").destructive = true
			return
		}
		cc.say(warden.Ask, "shell.infra.kubectl_delete", "kubectl delete removes cluster resources").destructive = true
	case "drain":
		cc.say(warden.Ask, "shell.infra.kubectl", "kubectl drain evicts every pod from a node").destructive = true
	default:
		cc.leaves("kubectl " + sub + " acts on a cluster")
	}
}

func hTerraform(cc *cmdCtx) {
	sub := firstOperand(cc)
	switch sub {
	case "plan", "init", "validate", "fmt", "show", "output", "version", "providers", "graph", "console", "get", "workspace", "state", "preview", "whoami", "stack", "-help", "help", "":
		if sub == "state" && hasArg(cc.args, "rm", "push", "mv") {
			cc.say(warden.Ask, "shell.infra.state", cc.name+" state changes infrastructure state")
		}
		return
	case "destroy":
		cc.say(warden.Deny, "shell.infra.destroy", cc.name+" destroy deletes the managed infrastructure").destructive = true
	case "apply", "up", "import", "taint", "untaint", "refresh", "force-unlock":
		for _, a := range cc.args {
			if a.Value == "-destroy" || a.Value == "--destroy" {
				cc.say(warden.Deny, "shell.infra.destroy", cc.name+" apply -destroy deletes the managed infrastructure").destructive = true
				return
			}
		}
		cc.leaves(cc.name + " " + sub + " changes real infrastructure")
	default:
		cc.leaves(cc.name + " " + sub + " is not a subcommand known to only read; it may change real infrastructure")
	}
}

// hCloud: cloud CLIs. Reads allowed, deletes of many things deny, other
// changes ask.
func hCloud(cc *cmdCtx) {
	ops := operandValues(cc.args)
	recursive := hasArg(cc.args, "--recursive", "-r", "--force", "-R")
	for _, o := range ops {
		switch {
		case o == "rm" || o == "rb" || strings.HasPrefix(o, "delete") || strings.HasPrefix(o, "terminate") || strings.HasPrefix(o, "remove") || o == "destroy" || o == "purge":
			if recursive || o == "rb" {
				cc.say(warden.Deny, "shell.cloud.delete_recursive", cc.name+" "+o+" deletes cloud resources recursively").destructive = true
			} else {
				cc.say(warden.Ask, "shell.cloud.delete", cc.name+" "+o+" deletes cloud resources").destructive = true
			}
			return
		}
	}
	for _, o := range ops {
		if strings.HasPrefix(o, "describe") || strings.HasPrefix(o, "list") || strings.HasPrefix(o, "get") || o == "ls" || o == "show" || o == "whoami" || o == "sts" || o == "help" || o == "version" || o == "info" {
			return
		}
	}
	if len(ops) == 0 {
		return
	}
	cc.leaves(cc.name + " " + strings.Join(ops[:min(2, len(ops))], " ") + " may change cloud resources")
}

func hNodePkg(cc *cmdCtx) {
	ops := operandValues(cc.args)
	sub := firstOperand(cc)
	if sub == "npm" && cc.name == "yarn" && len(ops) > 1 {
		sub = ops[1] // yarn npm publish, yarn npm login
	}
	if (sub == "global" && cc.name == "yarn" || hasArg(cc.args, "-g", "--global", "--location=global")) && sub != "ls" && sub != "list" && sub != "root" && sub != "bin" && sub != "prefix" && sub != "outdated" && sub != "config" && sub != "view" {
		installHost(cc, cc.name+" "+sub+" --global changes the global packages and their programs", cc.name+" install --save-dev …, then npx")
		return
	}
	switch sub {
	case "publish", "unpublish", "deprecate", "owner", "dist-tag", "login", "adduser", "token", "access", "team", "star", "unstar", "hook", "org":
		cc.leaves(cc.name + " " + sub + " changes the package registry")
	case "link", "ln", "unlink":
		// With no package named, it links (or unlinks) this package into
		// the global packages and their programs.
		if len(ops) == 1 && cc.name != "pnpm" {
			installHost(cc, cc.name+" "+sub+" with no package changes the global packages and their programs", cc.name+" install --save-dev ../other-package")
			return
		}
		taskRunner(cc)
	case "config", "set":
		if cc.name == "yarn" || sub == "set" && cc.name != "npm" {
			taskRunner(cc)
			return
		}
		write := sub == "set"
		if len(ops) > 1 {
			switch ops[1] {
			case "set", "delete", "rm", "edit", "fix":
				write = true
			}
		}
		if write && !hasArg(cc.args, "--location=project", "-L=project") && !followedBy(cc.args, "project", "--location", "-L") {
			userConfig(cc, cc.name+" "+strings.Join(ops[:min(len(ops), 2)], " ")+" writes the user's "+cc.name+" configuration (~/.npmrc, ~/.config/pnpm/rc), which holds registry tokens and is masked", cc.name+" config set KEY VALUE --location=project")
			return
		}
		taskRunner(cc)
	case "exec", "x", "dlx":
		cc.args = cc.args[1:]
		hPackageRunner(cc)
	case "run", "run-script", "rum", "urn":
		if len(ops) > 1 && isDeployTarget(ops[1]) {
			cc.leaves(fmt.Sprintf("%s run %s may deploy, publish or push beyond this machine", cc.name, ops[1]))
			return
		}
		taskRunner(cc)
	default:
		// yarn, pnpm and bun run a package script named as the subcommand.
		if cc.name != "npm" && isDeployTarget(sub) {
			cc.leaves(fmt.Sprintf("%s %s may deploy, publish or push beyond this machine", cc.name, sub))
			return
		}
		taskRunner(cc)
	}
}

// knownDevTools are package-runner targets that are ordinary project tools
// (scaffolders named create-* are too).
var knownDevTools = setOf("tsc", "typescript", "eslint", "prettier", "jest", "vitest", "mocha", "playwright",
	"@playwright/test", "next", "vite", "vite-node", "webpack", "webpack-cli", "tsx", "ts-node", "nx", "turbo",
	"lerna", "husky", "lint-staged", "storybook", "prisma", "drizzle-kit", "biome", "@biomejs/biome", "knip",
	"depcheck", "npm-check-updates", "ncu", "rimraf_", "nodemon", "concurrently", "cross-env", "http-server",
	"serve", "shadcn", "shadcn-ui", "degit", "tiged", "tailwindcss", "@tailwindcss/cli", "postcss", "sv",
	"@angular/cli", "ng", "@vue/cli", "nuxi", "astro", "esbuild", "rollup", "parcel", "c8", "nyc", "jest-cli",
	"karma", "cypress", "stylelint", "markdownlint-cli", "markdownlint-cli2", "typedoc", "@redocly/cli",
	"openapi-typescript", "json-server", "wait-on", "kill-port", "pyright", "cookiecutter", "copier",
	"pip-tools", "pip-audit", "bandit", "sqlfluff", "ruff", "black", "isort", "mypy", "pytest", "pre-commit")

// knownDevTool reports whether a package spec (name@version, @scope/name)
// names a known development tool or a create-* scaffolder.
func knownDevTool(spec string) bool {
	name := spec
	if strings.HasPrefix(name, "@") {
		if i := strings.IndexByte(name[1:], '@'); i >= 0 {
			name = name[:i+1]
		}
	} else if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	if i := strings.IndexByte(name, '='); i > 0 {
		name = name[:i] // uvx ruff==0.6
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	return knownDevTools.has(name) || strings.HasPrefix(base, "create-")
}

// hPackageRunner: npx PKG … runs a package from the registry.
func hPackageRunner(cc *cmdCtx) {
	p := parseArgs(compileGrammar("y,yes no p,package= c,call= q,quiet ignore-existing"), cc.args, true)
	if len(p.operands) == 0 {
		return
	}
	pkg := p.operands[0]
	name := pkg.Value
	if at := strings.LastIndexByte(name, '@'); at > 0 {
		name = name[:at]
	}
	if h := lookupSpec(name); h != nil && !pkg.Dynamic {
		inner := &cmdCtx{c: cc.c, cmd: cc.cmd, name: name, args: p.operands[1:], z: cc.z}
		h(inner)
		cc.out = append(cc.out, inner.out...)
		return
	}
	registryPackage(cc, cc.name, pkg.Value)
}

func hPip(cc *cmdCtx) {
	sub := firstOperand(cc)
	switch sub {
	case "config":
		if ops := operandValues(cc.args); len(ops) > 1 && (ops[1] == "set" || ops[1] == "unset" || ops[1] == "edit") && !hasArg(cc.args, "--site") {
			userConfig(cc, cc.name+" config "+ops[1]+" writes the user's pip configuration (~/.config/pip/pip.conf), which every pip on the host reads", cc.name+" config --site "+ops[1]+" … in a virtual environment, or PIP_INDEX_URL=… for this line")
		}
		return
	case "list", "show", "freeze", "check", "--version", "help", "debug", "inspect", "download", "hash", "cache", "index", "search":
		return
	case "install", "sync", "add", "lock", "venv", "run", "pip", "tool", "python", "init", "build", "export", "tree":
		if sub == "install" && hasArg(cc.args, "--user") {
			installHost(cc, cc.name+" install --user writes to ~/.local (its programs to ~/.local/bin)", "python3 -m venv .venv && .venv/bin/pip install …")
			return
		}
		taskRunner(cc)
	case "uninstall", "remove":
		cc.say(warden.Ask, "shell.package.remove", cc.name+" uninstall removes packages")
	case "publish", "upload":
		cc.leaves(cc.name + " " + sub + " publishes a package")
	default:
		cc.unseen("shell.unknown_subcommand", cc.name+" "+sub+" is not a known subcommand")
	}
}

// sqlDestructive are statements (upper case) that destroy data.
var sqlDestructive = []string{"DROP DATABASE", "DROP TABLE", "DROP SCHEMA", "DROP USER", "DROP ROLE", "TRUNCATE", "FLUSHALL", "FLUSHDB", "DROPDATABASE", "DROPDATABASE(", ".DROP(", "DELETEMANY({})", "SHUTDOWN", "CONFIG SET", "DEBUG SEGFAULT", "ALTER TABLE"}

// hDatabase: database clients. Statements in arguments, stdin and dynamic
// words are scanned for destructive SQL or commands.
func hDatabase(cc *cmdCtx) {
	var texts []string
	for _, a := range cc.args {
		texts = append(texts, a.Value)
		if a.Dynamic {
			texts = append(texts, cc.c.raw(a))
		}
	}
	if cc.cmd.StdinKnown {
		texts = append(texts, cc.cmd.Stdin)
	}
	for _, r := range cc.cmd.Redirects {
		if r.IsBody {
			texts = append(texts, r.Body)
		}
	}
	for _, t := range texts {
		u := strings.ToUpper(t)
		for _, k := range sqlDestructive {
			if strings.Contains(u, k) {
				cc.say(warden.Deny, "shell.database.destructive", fmt.Sprintf("%s would run %s, which destroys data", cc.name, k)).destructive = true
				return
			}
		}
		if strings.Contains(u, "DELETE FROM") && !strings.Contains(u, "WHERE") {
			cc.say(warden.Deny, "shell.database.destructive", cc.name+" would delete every row of a table").destructive = true
			return
		}
	}
	if fileDatabases.has(cc.name) {
		for _, t := range texts {
			cc.dotCommands(t)
		}
	}
	for _, a := range cc.args {
		if a.Dynamic {
			if fileDatabases.has(cc.name) {
				// Like a statement file on stdin (sqlite3 db < x.sql): what
				// it can change is a file, and the sandbox keeps the
				// command's writes to the project, the caches and /tmp.
				cc.unseen("shell.database.dynamic", cc.name+" is given a statement only known at run time")
				return
			}
			cc.say(warden.Ask, "shell.database.dynamic", cc.name+" is given a statement only known at run time, for a database server the sandbox does not hold")
			return
		}
	}
}

// fileDatabases keep their database in a file the command opens itself
// (not a server reached over the network).
var fileDatabases = setOf("sqlite3", "duckdb")

// dotCommands judges the commands of sqlite3's shell (and duckdb's, its
// fork) in a statement text: .shell and .system run a shell command, judged
// as that command; .load and load_extension() load native code the guard
// cannot see, which runs as an unknown program does. The shell takes any
// prefix of a command's name (.sh, .sys, .lo), as the names are matched.
func (cc *cmdCtx) dotCommands(text string) {
	for _, line := range strings.Split(text, "\n") {
		l := strings.Trim(line, " \t\r\"'")
		if strings.Contains(strings.ToUpper(l), "LOAD_EXTENSION") {
			cc.unseen("shell.database.extension", cc.name+" loads an extension (load_extension), native code the guard cannot see")
		}
		name, rest := l, ""
		if i := strings.IndexAny(l, " \t"); i >= 0 {
			name, rest = l[:i], l[i+1:]
		}
		name, ok := strings.CutPrefix(name, ".")
		switch {
		case !ok || name == "":
		case len(name) >= 2 && (strings.HasPrefix("shell", name) || strings.HasPrefix("system", name)):
			cc.subShell(rest)
		case strings.HasPrefix("load", name):
			cc.unseen("shell.database.extension", cc.name+" loads an extension (.load), native code the guard cannot see")
		}
	}
}

func urlHost(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return ""
	}
	h := s[i+3:]
	if j := strings.IndexAny(h, "/?#"); j >= 0 {
		h = h[:j]
	}
	if j := strings.LastIndexByte(h, '@'); j >= 0 {
		h = h[j+1:]
	}
	return h
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hAwk: awk -f runs a program file the guard cannot see (as do gawk's -E,
// -i and -l, an extension), which runs in the workspace sandbox, as a
// script does; print and printf redirected to a literal file write that
// file. (The walk classifies the commands a program runs.)
func hAwk(cc *cmdCtx) {
	p := parseArgs(gram("awk"), cc.args, false)
	if p.has("file", "exec", "include", "load", "W") {
		cc.unseen("shell.script_file", "awk runs a program file the guard cannot see")
		return
	}
	progs := p.words["source"]
	if len(progs) == 0 && len(p.operands) > 0 {
		progs = p.operands[:1]
	}
	for _, prog := range progs {
		if prog.Dynamic {
			continue // a program only known at run time is the walk's issue
		}
		for _, f := range awkOutputFiles(prog.Value) {
			cc.effect(EffWrite, walk.Word{Value: f})
		}
	}
	// A command the program builds from its input and its own values
	// (cmd = "wc -l < " $0; cmd | getline n) is code the guard cannot
	// see, as an interpreter's computed shell-out is: where nothing in the
	// line reaches the network (which could fill its input) and warden
	// saves the project first, it runs in the workspace sandbox; elsewhere
	// the walk's issue asks (the guard sandbox runs no new process).
	if span, ok := walk.AwkComputedCommand(cc.cmd.Argv); ok && !cc.c.lineNetwork() && cc.saveProject() {
		cc.unseen("shell.awk.computed_command", "awk runs a command it builds at run time from its input (warden saves the project's work tree first)")
		cc.c.understand(span)
	}
}

// lineNetwork reports whether a command of the line reaches the network:
// fetches, sends, or a /dev/tcp redirect.
func (c *ctx) lineNetwork() bool {
	for i := range c.walk.Commands {
		if cmd := &c.walk.Commands[i]; netSink(cmd) || netFetchStdout(cmd) {
			return true
		}
	}
	return false
}

// awkOutputFiles returns the literal files an awk program's print and printf
// statements write to (> "f", >> "f"). A > elsewhere, or inside parentheses,
// is a comparison.
func awkOutputFiles(s string) []string {
	var out []string
	inPrint, depth := false, 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			i = awkStringEnd(s, i)
			continue
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == ';' || c == '{' || c == '}' || c == '\n':
			inPrint, depth = false, 0
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '>' && inPrint && depth == 0:
			j := i + 1
			if j < len(s) && s[j] == '>' {
				j++
			}
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j < len(s) && s[j] == '"' {
				end := awkStringEnd(s, j)
				out = append(out, strings.TrimSuffix(s[j+1:end], `"`))
				i = end
				continue
			}
		case isWordStart(s, i):
			j := i
			for j < len(s) && (s[j] == '_' || 'a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z' || '0' <= s[j] && s[j] <= '9') {
				j++
			}
			if w := s[i:j]; w == "print" || w == "printf" {
				inPrint, depth = true, 0
			}
			i = j
			continue
		}
		i++
	}
	return out
}

// awkStringEnd returns the index just past the awk string literal at s[i].
func awkStringEnd(s string, i int) int {
	for i++; i < len(s) && s[i] != '"'; i++ {
		if s[i] == '\\' {
			i++
		}
	}
	return min(i+1, len(s))
}

// isWordStart reports whether an identifier starts at s[i].
func isWordStart(s string, i int) bool {
	c := s[i]
	letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	if !letter || i == 0 {
		return letter
	}
	p := s[i-1]
	return !(p == '_' || 'a' <= p && p <= 'z' || 'A' <= p && p <= 'Z' || '0' <= p && p <= '9')
}

// tmuxValued are, by subcommand, the option letters of tmux new-session,
// new-window and split-window that take a value (-e, an environment
// variable for the command, is left to the ask).
var tmuxValued = map[string]string{
	"new-session": "cFfnstxy", "new": "cFfnstxy",
	"new-window": "cFnt", "neww": "cFnt",
	"split-window": "cFlpt", "splitw": "cFlpt",
}

// tmuxKeyNames are the key names a tmux send-keys line ends with to run
// what it typed.
var tmuxKeyNames = setOf("Enter", "C-m", "KPEnter", "C-j")

// tmuxSendKeys judges tmux send-keys, its words plainly written, where
// the line runs in warden's sandbox: the text typed into a pane, up to
// the key that runs it, is judged as the command the pane's shell runs.
// In the sandbox tmux reaches only the servers the session started there
// (the host's socket directories are outside its /tmp, or masked), so the
// pane is contained too. Without a sandbox (a host that runs the command
// itself), or with a word known only at run time, it is left to the ask.
func tmuxSendKeys(cc *cmdCtx) bool {
	if len(cc.args) == 0 || cc.args[0].Value != "send-keys" && cc.args[0].Value != "send" || !cc.c.p.SandboxAvailable {
		return false
	}
	var words []string
	for j := 1; j < len(cc.args); j++ {
		a := cc.args[j]
		if a.Dynamic {
			return false
		}
		switch v := a.Value; {
		case len(words) == 0 && (v == "-t" || v == "-N"):
			j++ // the target pane, a repeat count
		case len(words) == 0 && strings.HasPrefix(v, "-"):
			if strings.ContainsAny(v[1:], "HKMRX") {
				return false // keys by code, mouse, a copy-mode command
			}
		case tmuxKeyNames.has(v):
			if text := strings.Join(words, " "); text != "" {
				cc.subShell(text)
			}
			words = nil
		default:
			words = append(words, v)
		}
	}
	return len(words) == 0 // text left unsent on a prompt runs nothing
}

// tmuxNew judges tmux new-session, new-window or split-window (and their
// short names), its words plainly written: the shell command it starts,
// one word after the options (tmux runs it with sh -c), is judged as if
// run here, and none starts a shell that does nothing. It reports whether
// it judged the command; anything else (tmux's own options before the
// subcommand, a command of several words, whose quoting tmux rebuilds,
// send-keys, run-shell, -e, a word known only at run time) is left to the
// ask.
func tmuxNew(cc *cmdCtx) bool {
	if len(cc.args) == 0 {
		return false
	}
	valued, ok := tmuxValued[cc.args[0].Value]
	if !ok {
		return false
	}
	var words []string
	for j := 1; j < len(cc.args); j++ {
		a := cc.args[j]
		if a.Dynamic {
			return false
		}
		v := a.Value
		if len(words) > 0 || len(v) < 2 || v[0] != '-' {
			words = append(words, v)
			continue
		}
		if v == "--" {
			continue
		}
		for k := 1; k < len(v); k++ {
			if v[k] == 'e' {
				return false
			}
			if strings.IndexByte(valued, v[k]) >= 0 {
				if k == len(v)-1 {
					j++ // its value is the next word
				}
				break
			}
		}
	}
	switch len(words) {
	case 0:
		return true
	case 1:
		cc.subShell(words[0])
		return true
	}
	return false
}
