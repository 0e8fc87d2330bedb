package shellguard

import (
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

func toolHandlers(t map[string]handler) {
	t["warden"] = hWarden
	t["curl"] = hNetClient
	t["wget"] = hNetClient
	t["http"] = hNetClient
	t["xh"] = hNetClient
	for _, n := range []string{"nc", "ncat", "netcat", "socat", "telnet"} {
		t[n] = func(cc *cmdCtx) {
			for _, a := range cc.args {
				if a.Value == "-e" || a.Value == "-c" || strings.HasPrefix(a.Value, "EXEC:") || strings.HasPrefix(a.Value, "SYSTEM:") || strings.Contains(a.Value, "exec:") {
					cc.say(warden.Deny, "shell.reverse_shell", cc.name+" would connect a shell to the network").destructive = true
					return
				}
			}
			cc.say(warden.Sandbox, "shell.raw_socket", cc.name+" opens raw network connections; it runs in the sandbox")
		}
	}
	t["ssh"] = func(cc *cmdCtx) { cc.say(warden.Ask, "shell.remote_login", "ssh opens a session on another machine") }
	t["scp"] = func(cc *cmdCtx) {
		n := len(cc.args)
		if n == 0 {
			return
		}
		if !strings.Contains(cc.args[n-1].Value, ":") {
			cc.effect(EffWrite, cc.args[n-1])
			return
		}
		for _, a := range cc.args[:n-1] {
			if !strings.HasPrefix(a.Value, "-") && cc.zone(a) == ZoneHomeSensitive {
				cc.say(warden.Deny, "shell.exfiltration", "scp would copy the secret file "+a.Value+" to another host").destructive = true
			}
		}
	}
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
	t["export"] = t["set"]
	t["declare"] = t["set"]
	t["docker"] = hContainer
	t["podman"] = hContainer
	t["nerdctl"] = hContainer
	t["kubectl"] = hKubectl
	t["oc"] = hKubectl
	t["helm"] = func(cc *cmdCtx) {
		switch firstOperand(cc) {
		case "list", "ls", "status", "get", "show", "template", "lint", "version", "search", "repo", "history", "env", "dependency", "help", "":
			return
		case "uninstall", "delete", "rollback":
			cc.say(warden.Ask, "shell.infra.helm", "helm "+firstOperand(cc)+" changes a cluster").destructive = true
		default:
			cc.say(warden.Ask, "shell.infra.helm", "helm "+firstOperand(cc)+" changes a cluster")
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
	t["gh"] = func(cc *cmdCtx) {
		ops := operandValues(cc.args)
		if len(ops) >= 2 && (ops[1] == "delete" || ops[1] == "archive") {
			cc.say(warden.Ask, "shell.gh.delete", "gh "+ops[0]+" "+ops[1]+" deletes on GitHub").destructive = true
		}
	}
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
		subRunner(cc, "build test run vet fmt mod generate install list env version doc fix tool clean work get bug help")
	}
	t["cargo"] = func(cc *cmdCtx) {
		if firstOperand(cc) == "publish" || firstOperand(cc) == "yank" || firstOperand(cc) == "login" || firstOperand(cc) == "owner" {
			cc.say(warden.Ask, "shell.publish", "cargo "+firstOperand(cc)+" changes a package registry")
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
	// Editors edit interactively; a -c/+ command runs editor (and shell) code.
	for _, n := range []string{"vim", "vi", "nvim", "nano", "emacs", "code", "open", "xdg-open"} {
		t[n] = func(cc *cmdCtx) {
			for _, a := range cc.args {
				if strings.HasPrefix(a.Value, "-c") || strings.HasPrefix(a.Value, "+") || a.Value == "--cmd" || a.Value == "--eval" || a.Value == "-S" {
					cc.say(warden.Ask, "shell.editor_command", cc.name+" is given commands to run")
					return
				}
			}
		}
	}
	// Terminal multiplexers run whatever command they are given.
	for _, n := range []string{"screen", "tmux"} {
		t[n] = func(cc *cmdCtx) {
			switch firstOperand(cc) {
			case "", "ls", "list-sessions", "attach", "attach-session", "a", "-ls", "-r", "list-windows", "has-session", "kill-session", "detach":
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
				cc.say(warden.Sandbox, "shell.source", cc.name+" "+a.Value+" runs a script the guard cannot see; it runs in the sandbox")
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
	cc.say(warden.Sandbox, "shell.unknown_subcommand", fmt.Sprintf("%s %s is not a known subcommand", cc.name, sub))
}

// hNetClient: curl and wget read the network; uploads are sinks.
func hNetClient(cc *cmdCtx) {
	for _, f := range netOutputFiles(cc.cmd) {
		cc.effect(EffWrite, walk.Word{Value: f})
	}
	// Uploads of secret files: -T FILE, -d @FILE, -F name=@FILE, --post-file.
	for i, a := range cc.args {
		v := a.Value
		var file string
		switch {
		case (v == "-T" || v == "--upload-file" || v == "--post-file" || v == "--body-file") && i+1 < len(cc.args):
			file = cc.args[i+1].Value
		case strings.HasPrefix(v, "--post-file=") || strings.HasPrefix(v, "--body-file="):
			_, file, _ = strings.Cut(v, "=")
		case strings.HasPrefix(v, "@") && len(v) > 1 && v != "@-":
			file = v[1:]
		case strings.Contains(v, "=@") && !strings.HasSuffix(v, "=@-"):
			_, file, _ = strings.Cut(v, "=@")
			file, _, _ = strings.Cut(file, ";")
		}
		if file != "" && cc.zone(walk.Word{Value: file}) == ZoneHomeSensitive {
			cc.say(warden.Deny, "shell.exfiltration", cc.name+" would upload the secret file "+file).destructive = true
		}
	}
	for _, a := range cc.args {
		if h := urlHost(a.Value); h != "" && !isASCII(h) {
			cc.say(warden.Ask, "shell.net.homograph", "the URL host has non-ASCII characters, a homograph of another host")
		}
	}
}

// hContainer: docker/podman. run and exec are unwrapped by Walk (their
// inner command is classified); here the container options are judged.
func hContainer(cc *cmdCtx) {
	ops := operandValues(cc.args)
	sub := ""
	if len(ops) > 0 {
		sub = ops[0]
	}
	switch sub {
	case "ps", "images", "logs", "inspect", "version", "info", "build", "pull", "search", "history", "top", "stats", "port", "diff", "events", "login", "tag", "", "buildx", "context", "start", "stop", "restart", "create", "cp", "wait", "attach":
		return
	case "run", "exec":
		containerRun(cc)
	case "compose":
		if len(ops) > 1 && ops[1] == "down" && (hasArg(cc.args, "-v", "--volumes", "--rmi")) {
			cc.say(warden.Ask, "shell.container.volumes", "docker compose down -v deletes the project's volumes").destructive = true
		}
	case "system", "volume", "image", "container", "network", "builder":
		if len(ops) > 1 && (ops[1] == "prune" || ops[1] == "rm" || ops[1] == "remove") {
			cc.say(warden.Ask, "shell.container.prune", "docker "+sub+" "+ops[1]+" deletes containers, images or volumes").destructive = true
		}
	case "rm", "rmi", "kill":
		cc.say(warden.Ask, "shell.container.remove", "docker "+sub+" removes containers or images")
	case "push":
		cc.say(warden.Ask, "shell.publish", "docker push publishes an image")
	default:
		cc.say(warden.Ask, "shell.container", "docker "+sub+" is not a known subcommand")
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
	case "get", "describe", "logs", "top", "explain", "version", "cluster-info", "api-resources", "api-versions", "config", "auth", "diff", "events", "wait", "":
		return
	case "delete":
		if hasArg(cc.args, "--all", "-A", "--all-namespaces") || len(ops) > 1 && (ops[1] == "namespace" || ops[1] == "ns" || ops[1] == "pv" || ops[1] == "node" || ops[1] == "crd") {
			cc.say(warden.Deny, "shell.infra.kubectl_delete_all", "kubectl delete of namespaces, nodes or --all deletes whole workloads").destructive = true
			return
		}
		cc.say(warden.Ask, "shell.infra.kubectl_delete", "kubectl delete removes cluster resources").destructive = true
	case "drain":
		cc.say(warden.Ask, "shell.infra.kubectl", "kubectl drain evicts every pod from a node").destructive = true
	default:
		cc.say(warden.Ask, "shell.infra.kubectl", "kubectl "+sub+" changes a cluster")
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
		cc.say(warden.Ask, "shell.infra.apply", cc.name+" "+sub+" changes real infrastructure")
	default:
		cc.say(warden.Ask, "shell.infra", cc.name+" "+sub+" is not a known subcommand")
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
	cc.say(warden.Ask, "shell.cloud", cc.name+" "+strings.Join(ops[:min(2, len(ops))], " ")+" may change cloud resources")
}

func hNodePkg(cc *cmdCtx) {
	sub := firstOperand(cc)
	switch sub {
	case "publish", "unpublish", "deprecate", "owner", "dist-tag", "login", "adduser", "token", "access", "team":
		cc.say(warden.Ask, "shell.publish", cc.name+" "+sub+" changes the package registry")
	case "exec", "x", "dlx":
		cc.args = cc.args[1:]
		hPackageRunner(cc)
	default:
		taskRunner(cc)
	}
}

// knownDevTools are package-runner targets that are ordinary project tools.
var knownDevTools = setOf("tsc", "eslint", "prettier", "jest", "vitest", "mocha", "playwright", "next",
	"vite", "webpack", "tsx", "ts-node", "nx", "turbo", "lerna", "husky", "lint-staged", "create-react-app",
	"create-next-app", "create-vite", "storybook", "prisma", "drizzle-kit", "biome", "knip", "depcheck",
	"npm-check-updates", "ncu", "rimraf_", "nodemon", "concurrently", "cross-env", "http-server", "serve")

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
	if knownDevTools.has(name) {
		taskRunner(cc)
		return
	}
	cc.say(warden.Sandbox, "shell.package_runner", fmt.Sprintf("%s runs the registry package %s, code the guard cannot see", cc.name, pkg.Value))
}

func hPip(cc *cmdCtx) {
	sub := firstOperand(cc)
	switch sub {
	case "list", "show", "freeze", "check", "--version", "help", "config", "debug", "inspect", "download", "hash", "cache", "index", "search":
		return
	case "install", "sync", "add", "lock", "venv", "run", "pip", "tool", "python", "init", "build", "export", "tree":
		taskRunner(cc)
	case "uninstall", "remove":
		cc.say(warden.Ask, "shell.package.remove", cc.name+" uninstall removes packages")
	case "publish", "upload":
		cc.say(warden.Ask, "shell.publish", cc.name+" "+sub+" publishes a package")
	default:
		cc.say(warden.Sandbox, "shell.unknown_subcommand", cc.name+" "+sub+" is not a known subcommand")
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
	for _, a := range cc.args {
		if a.Dynamic {
			cc.say(warden.Ask, "shell.database.dynamic", cc.name+" is given a statement only known at run time")
			return
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

// hAwk: awk -f runs a program file the guard cannot see, which the sandbox
// takes, as it takes source; print and printf redirected to a literal file
// write that file. (The walk classifies the commands a program runs.)
func hAwk(cc *cmdCtx) {
	var prog *walk.Word
	for i := 0; i < len(cc.args); i++ {
		v := cc.args[i].Value
		switch {
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "-f"):
			cc.say(warden.Sandbox, "shell.script_file", "awk runs a program file the guard cannot see; it runs in the sandbox")
			return
		case v == "-v" || v == "-F" || v == "--assign" || v == "--field-separator":
			i++
		case v == "-e" || v == "--source":
			if i+1 < len(cc.args) {
				prog = &cc.args[i+1]
			}
			i = len(cc.args)
		case strings.HasPrefix(v, "-") && len(v) > 1:
		default:
			prog = &cc.args[i]
			i = len(cc.args)
		}
	}
	if prog == nil || prog.Dynamic {
		return // a program only known at run time is the walk's issue
	}
	for _, f := range awkOutputFiles(prog.Value) {
		cc.effect(EffWrite, walk.Word{Value: f})
	}
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
