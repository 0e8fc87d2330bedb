package shellguard

import (
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
)

// Effects that leave the machine or the project ask by default: pushing,
// publishing, deploying, acting on a cluster or through a container daemon,
// logging in elsewhere. The sandbox cannot contain them (their effect is
// elsewhere, and they need credentials the sandbox masks), so a human
// decides, and may answer "run on host". The rule is shell.leaves_machine
// (see cmdCtx.leaves); what destroys data keeps its own, stricter rule.

// deployTools are CLIs whose commands change something beyond this machine
// (a deployed site, an app platform, hosts, a cluster): each maps to the
// subcommands that only read or run locally. Any other subcommand asks; so
// does a second word other than a read (see secondReads); a bare invocation
// asks for the tools that deploy when given no subcommand.
var deployTools = map[string]string{
	"vercel":           "dev build whoami ls list inspect logs help pull link",
	"netlify":          "dev build status help logs watch open serve functions:serve functions:list sites:list env:list link",
	"ntl":              "dev build status help logs watch open serve functions:serve functions:list sites:list env:list link",
	"fly":              "status logs version help doctor dashboard docs",
	"flyctl":           "status logs version help doctor dashboard docs",
	"firebase":         "emulators:start emulators:exec serve help use init projects:list apps:list login:list functions:log functions:list hosting:channel:list target",
	"heroku":           "logs apps apps:info ps releases help status whoami local auth:whoami addons domains",
	"railway":          "status logs whoami help version list link run",
	"wrangler":         "dev whoami types help init generate docs build tail",
	"serverless":       "print info logs package offline help plugin",
	"sls":              "print info logs package offline help plugin",
	"cdk":              "synth synthesize diff ls list doctor docs init context metadata acknowledge ack notices version",
	"cdktf":            "synth diff get init list convert provider help",
	"sam":              "build validate local init logs list traces",
	"eb":               "status health logs list printenv events labs",
	"amplify":          "status mock help",
	"surge":            "list whoami help",
	"skaffold":         "build render diagnose fix init version config schema survey completion lint inspect",
	"argocd":           "version help login context",
	"goreleaser":       "build check init healthcheck jsonschema help",
	"twine":            "check help",
	"ansible":          "help",
	"ansible-playbook": "help",
}

// deployOnBare are the deploy tools that deploy when run with no subcommand.
var deployOnBare = setOf("vercel", "surge", "ansible", "ansible-playbook", "goreleaser")

// secondReads are the second words that only read under any deploy tool
// (fly apps list, wrangler d1 list, argocd app get…).
var secondReads = setOf("list", "ls", "show", "status", "view", "get", "describe", "info", "logs", "whoami", "version", "help", "history", "diff", "manifests")

// readFlags are options that make any of these tools only print.
var readFlags = setOf("--help", "-h", "--version", "-v", "-V", "--syntax-check", "--list-hosts", "--list-tasks", "--list-tags", "--snapshot")

func hDeployTool(reads string) handler {
	ok := setOf(strings.Fields(reads)...)
	return func(cc *cmdCtx) {
		for _, a := range cc.args {
			if !a.Dynamic && readFlags.has(a.Value) {
				return
			}
		}
		if cc.name == "goreleaser" && hasArg(cc.args, "--skip=publish", "--skip-publish") {
			return
		}
		ops := operandValues(cc.args)
		if len(ops) == 0 {
			if deployOnBare.has(cc.name) {
				cc.leaves(cc.name + " deploys, or acts on other machines, when run without a subcommand")
			}
			return
		}
		sub := ops[0]
		if cc.name == "ansible" || cc.name == "ansible-playbook" {
			cc.leaves(fmt.Sprintf("%s runs tasks on the hosts of its inventory", cc.name))
			return
		}
		if ok.has(sub) || strings.HasSuffix(sub, ":list") || strings.HasSuffix(sub, ":info") || strings.HasSuffix(sub, ":get") {
			return
		}
		if len(ops) > 1 && secondReads.has(ops[1]) {
			return
		}
		cc.leaves(fmt.Sprintf("%s %s deploys or changes a service beyond this machine", cc.name, sub))
	}
}

// forgeReads are the second words of gh and glab that only read, or act on
// the local clone (pr checkout).
var forgeReads = setOf("view", "list", "ls", "status", "diff", "checks", "download", "verify", "watch", "checkout", "clone", "browse", "search")

// hForgeCLI: gh and glab read freely; everything that creates, edits,
// comments, merges, releases or deletes on the forge asks (deletes keep
// their own rule).
func hForgeCLI(cc *cmdCtx) {
	cc.netJudged = true // it talks to its own API host
	ops := operandValues(cc.args)
	if len(ops) == 0 {
		return
	}
	top, sub := ops[0], ""
	if len(ops) > 1 {
		sub = ops[1]
	}
	switch top {
	case "help", "version", "--version", "completion", "status", "browse", "search", "config":
		return
	case "auth":
		switch sub {
		case "status", "":
			return
		case "token":
			cc.c.markSecretRead(cc.cmd) // it prints the stored token
			return
		}
		cc.leaves(cc.name + " auth " + sub + " changes the forge login")
		return
	case "api":
		ghAPI(cc, ops)
		return
	case "alias":
		if sub == "list" || sub == "" {
			return
		}
	}
	if sub == "delete" || sub == "archive" {
		cc.say(warden.Ask, "shell.gh.delete", cc.name+" "+top+" "+sub+" deletes on the forge").destructive = true
		return
	}
	if sub == "" || forgeReads.has(sub) {
		return
	}
	cc.leaves(fmt.Sprintf("%s %s %s acts on the forge (GitHub, GitLab), beyond this machine", cc.name, top, sub))
}

// ghAPI: gh api reads with GET (a GraphQL query too); another method, a
// field, an input file or a GraphQL mutation writes.
func ghAPI(cc *cmdCtx, ops []string) {
	method := ""
	write := false
	for i, a := range cc.args {
		v := a.Value
		switch {
		case (v == "-X" || v == "--method") && i+1 < len(cc.args):
			method = strings.ToUpper(cc.args[i+1].Value)
		case strings.HasPrefix(v, "--method="):
			method = strings.ToUpper(strings.TrimPrefix(v, "--method="))
		case strings.HasPrefix(v, "-X") && len(v) > 2:
			method = strings.ToUpper(v[2:])
		case v == "-f" || v == "-F" || v == "--field" || v == "--raw-field" || v == "--input" ||
			strings.HasPrefix(v, "--field=") || strings.HasPrefix(v, "--raw-field=") || strings.HasPrefix(v, "--input="):
			write = true
		}
		if strings.Contains(v, "mutation") {
			method = "POST"
		}
	}
	graphql := len(ops) > 1 && ops[1] == "graphql"
	if method == "" || method == "GET" || method == "HEAD" {
		if !write || graphql && method == "" {
			return
		}
	}
	cc.leaves(cc.name + " api sends a request that changes data on the forge")
}

// publishSubs are the subcommands (first or second word) of package tools
// that publish or change a registry; the tool otherwise runs as a task
// runner.
var publishSubs = map[string]string{
	"gem":    "push yank owner signin signout",
	"poetry": "publish",
	"hatch":  "publish",
	"flit":   "publish",
	"pdm":    "publish",
	// ansible-galaxy collection publish, role import
	"ansible-galaxy": "publish import",
}

func hPublisher(subs string) handler {
	pub := setOf(strings.Fields(subs)...)
	return func(cc *cmdCtx) {
		ops := operandValues(cc.args)
		for _, sub := range ops[:min(2, len(ops))] {
			if pub.has(sub) {
				cc.leaves(cc.name + " " + sub + " publishes to, or changes, a package registry")
				return
			}
		}
		taskRunner(cc)
	}
}

// hMaven: mvn goals that deploy, release or push an image ask.
func hMaven(cc *cmdCtx) {
	for _, g := range operandValues(cc.args) {
		l := strings.ToLower(g)
		if strings.Contains(l, "deploy") || strings.HasPrefix(l, "release:") || l == "jib:build" || strings.Contains(l, "publish") {
			cc.leaves(fmt.Sprintf("%s %s deploys or publishes artifacts beyond this machine", cc.name, g))
			return
		}
	}
	taskRunner(cc)
}

// hGradle: gradle tasks that publish (not to the local Maven repository),
// deploy, release or push an image ask.
func hGradle(cc *cmdCtx) {
	for _, t := range operandValues(cc.args) {
		l := strings.ToLower(t[strings.LastIndexByte(t, ':')+1:])
		if strings.HasPrefix(l, "publish") && !strings.Contains(l, "mavenlocal") || strings.Contains(l, "deploy") ||
			l == "jib" || l == "uploadarchives" || l == "release" {
			cc.leaves(fmt.Sprintf("%s %s deploys or publishes artifacts beyond this machine", cc.name, t))
			return
		}
	}
	taskRunner(cc)
}

// hDotnet: dotnet nuget push and delete change a package feed.
func hDotnet(cc *cmdCtx) {
	ops := operandValues(cc.args)
	if len(ops) > 1 && ops[0] == "nuget" && (ops[1] == "push" || ops[1] == "delete") {
		cc.leaves("dotnet nuget " + ops[1] + " changes a package feed")
		return
	}
	taskRunner(cc)
}

func leavingHandlers(t map[string]handler) {
	for name, reads := range deployTools {
		t[name] = hDeployTool(reads)
	}
	for name, subs := range publishSubs {
		t[name] = hPublisher(subs)
	}
	t["mvn"] = hMaven
	t["mvnw"] = hMaven
	t["gradle"] = hGradle
	t["gradlew"] = hGradle
	t["dotnet"] = hDotnet
}
