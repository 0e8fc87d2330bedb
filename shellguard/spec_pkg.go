package shellguard

import (
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// pkgAction is what a system package manager is told to do.
type pkgAction int

const (
	pkgChange pkgAction = iota // installs, upgrades or reconfigures: asks (the zero value)
	pkgRemove                  // removes packages: asks
	pkgRead                    // lists, searches or shows: allowed
)

// hSystemPkg: a system package manager that installs, upgrades or removes
// packages asks; one that only lists, searches or shows them (dpkg -L,
// apt-cache policy, rpm -qa, pacman -Ss) is allowed. dpkg, rpm, pacman,
// emerge and nix-env take their action as an option, the others as a
// subcommand.
func hSystemPkg(cc *cmdCtx) {
	var act pkgAction
	switch cc.name {
	case "dpkg":
		act = dpkgAction(cc.args)
	case "rpm":
		act = rpmAction(cc.args)
	case "pacman":
		act = pacmanAction(cc.args)
	case "emerge", "nix-env":
		act = optionAction(cc.name, cc.args)
	default:
		act = subcommandAction(cc.name, firstOperand(cc), cc.args)
	}
	what := strings.Join(append([]string{cc.name}, leadingValues(cc.args, 2)...), " ")
	switch act {
	case pkgRead:
	case pkgRemove:
		cc.say(warden.Ask, "shell.package.remove", what+" removes system packages").destructive = true
	default:
		cc.say(warden.Ask, "shell.package.install", what+" changes system packages")
	}
}

// leadingValues returns the known values of the first n words of args, to
// say what a command was told (dpkg -i x.deb).
func leadingValues(args []walk.Word, n int) []string {
	var out []string
	for _, a := range args[:min(n, len(args))] {
		if a.Value != "" {
			out = append(out, a.Value)
		}
	}
	return out
}

// pkgReadSubs are the subcommands of apt, apt-get, apt-cache, yum, dnf,
// zypper, apk, brew, port, snap and flatpak that only read; pkgRemoveSubs
// those that remove. Any other subcommand changes the system's packages.
var (
	pkgReadSubs = setOf("list", "search", "show", "info", "policy", "depends", "rdepends", "--version", "-v", "-V",
		"--help", "-h", "help", "query", "status", "outdated", "doctor", "config", "leaves", "deps", "uses", "desc", "home",
		"cat", "madison", "changelog", "showpkg", "showsrc", "pkgnames", "stats", "dump", "dumpavail", "unmet", "dotty",
		"repolist", "repoquery", "provides", "whatprovides", "deplist", "check-update", "list-updates", "version", "dot")
	pkgRemoveSubs = setOf("remove", "purge", "autoremove", "erase", "uninstall", "del")
)

// subcommandAction is what a subcommand-driven manager does. With no
// subcommand it only prints its version or help.
func subcommandAction(name, sub string, args []walk.Word) pkgAction {
	switch {
	case sub == "":
		for _, a := range args {
			if a.Dynamic || !pkgReadSubs.has(a.Value) {
				return pkgChange
			}
		}
		return pkgRead
	case name == "apt-cache" && !hasArg(args, "gencaches"):
		return pkgRead // it only reads the package cache, but for gencaches
	case pkgReadSubs.has(sub):
		return pkgRead
	case pkgRemoveSubs.has(sub):
		return pkgRemove
	}
	return pkgChange
}

// pkgReadOpts are the options of emerge and nix-env that only read: their
// searches and queries. nix-env's query options come in a cluster after
// -q (-qaP).
var pkgReadOpts = map[string]*nameSet{
	"nix-env": setOf("--query", "--list-generations", "--available", "--installed", "--attr-path", "--status", "--json", "--out-path", "--description", "--help", "--version"),
	"emerge":  setOf("-s", "--search", "-S", "--searchdesc", "--info", "-p", "--pretend", "-h", "--help", "--version", "-V"),
}

// optionAction is what emerge or nix-env does: read when it is given an
// option and every option only reads (emerge --search vim, nix-env -qa),
// remove for emerge --unmerge and nix-env -e, and change otherwise
// (emerge vim, emerge --sync, nix-env -u).
func optionAction(name string, args []walk.Word) pkgAction {
	read := false
	for _, a := range args {
		v := a.Value
		switch {
		case a.Dynamic:
			return pkgChange
		case v == "--":
			return pkgChange
		case !strings.HasPrefix(v, "-"):
		case pkgReadOpts[name].has(v), name == "nix-env" && strings.HasPrefix(v, "-q") && !strings.HasPrefix(v, "--"):
			read = true
		case name == "nix-env" && (v == "-e" || v == "--uninstall"), name == "emerge" && (v == "-C" || v == "--unmerge" || v == "--depclean" || v == "-c"):
			return pkgRemove
		default:
			return pkgChange
		}
	}
	if read || len(args) == 0 {
		return pkgRead
	}
	return pkgChange
}

// dpkgReads are dpkg's actions that only read (its dpkg-query and dpkg-deb
// queries); dpkgQuiet are the options that change nothing with them.
var (
	dpkgReads = setOf("-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p", "--print-avail",
		"-c", "--contents", "-I", "--info", "-f", "--field", "-W", "--show", "-C", "--audit", "-V", "--verify",
		"--get-selections", "--print-architecture", "--print-foreign-architectures", "--compare-versions",
		"--ctrl-tarfile", "--fsys-tarfile", "--help", "-?", "--version", "--force-help")
	dpkgQuiet = setOf("--admindir", "--root", "--instdir", "--no-pager", "--showformat", "--load-avail", "--verify-format")
)

// dpkgAction is what dpkg's options tell it to do: read when every option
// is a query (dpkg -L make, dpkg -S /usr/bin/make) or changes nothing with
// one (--admindir), remove with -r or -P, and change otherwise (-i,
// --configure, --set-selections, an option the guard does not know).
func dpkgAction(args []walk.Word) pkgAction {
	act := pkgRead
	for _, a := range args {
		v, _, _ := strings.Cut(a.Value, "=")
		switch {
		case a.Dynamic:
			return pkgChange
		case v == "--":
			return act
		case !strings.HasPrefix(v, "-") || dpkgReads.has(v) || dpkgQuiet.has(v):
		case v == "-r" || v == "--remove" || v == "-P" || v == "--purge":
			act = pkgRemove
		default:
			return pkgChange
		}
	}
	return act
}

// rpmAction is what rpm's mode (its first action option) tells it to do:
// read for a query, a verify or a signature check (rpm -qa, rpm -qf F,
// rpm -V pkg), remove for -e, and change otherwise. A macro option runs
// shell code in any mode (rpm -q --eval '%(cmd)'), as does --pipe.
func rpmAction(args []walk.Word) pkgAction {
	mode := ""
	for _, a := range args {
		v, _, _ := strings.Cut(a.Value, "=")
		switch {
		case a.Dynamic:
			return pkgChange
		case v == "--":
			return rpmMode(mode)
		case strings.HasPrefix(v, "-E") || strings.HasPrefix(v, "-D") || v == "--eval" || v == "--define" || v == "--macros" || v == "--rcfile" || v == "--pipe" || v == "--load":
			return pkgChange
		case mode != "" || !strings.HasPrefix(v, "-"):
		case strings.HasPrefix(v, "--"):
			switch v {
			case "--query", "--verify", "--checksig", "--querytags", "--showrc", "--version", "--help", "--install", "--upgrade", "--freshen", "--reinstall", "--erase", "--import", "--initdb", "--rebuilddb", "--setperms", "--setugids", "--restore", "--delsign", "--addsign", "--resign":
				mode = v
			}
		default:
			if strings.ContainsRune("qVKiUFe", rune(v[1])) {
				mode = v[:2]
			}
		}
	}
	return rpmMode(mode)
}

// rpmMode is what rpm does in mode (-q, --erase…; "" for none).
func rpmMode(mode string) pkgAction {
	switch mode {
	case "-q", "-V", "-K", "--query", "--verify", "--checksig", "--querytags", "--showrc", "--version", "--help":
		return pkgRead
	case "-e", "--erase":
		return pkgRemove
	}
	return pkgChange
}

// pacmanAction is what pacman's operation tells it to do: read for -Q,
// -T, -F (but -Fy, which refreshes its databases) and -S that only searches
// or shows (-Ss, -Si, -Sl, -Sg, -Sp), remove for -R, and change otherwise
// (-S PKG, -Syu, -Sc, -U, -D).
func pacmanAction(args []walk.Word) pkgAction {
	op := byte(0)
	flags := map[string]bool{}
	for _, a := range args {
		v := a.Value
		if v == "--" {
			break // the rest are packages
		}
		switch {
		case a.Dynamic:
			return pkgChange
		case strings.HasPrefix(v, "--"):
			name, _, _ := strings.Cut(v[2:], "=")
			if l, ok := pacmanOps[name]; ok && op == 0 {
				op = l
			} else {
				flags[name] = true
			}
		case strings.HasPrefix(v, "-"):
			for k := 1; k < len(v); k++ {
				if c := v[k]; strings.IndexByte("QSRUDTFV", c) >= 0 && op == 0 {
					op = c
				} else {
					flags[pacmanLong[c]] = true
				}
			}
		}
	}
	switch op {
	case 0, 'Q', 'T', 'V':
		return pkgRead
	case 'F':
		if !flags["refresh"] {
			return pkgRead
		}
	case 'S':
		if (flags["search"] || flags["info"] || flags["list"] || flags["groups"] || flags["print"]) &&
			!(flags["refresh"] || flags["sysupgrade"] || flags["clean"] || flags["downloadonly"]) {
			return pkgRead
		}
	case 'R':
		return pkgRemove
	}
	return pkgChange
}

// pacmanOps are pacman's operations by their long names; pacmanLong names
// the short options that matter after -S and -F.
var (
	pacmanOps  = map[string]byte{"query": 'Q', "sync": 'S', "remove": 'R', "upgrade": 'U', "database": 'D', "deptest": 'T', "files": 'F', "version": 'V'}
	pacmanLong = map[byte]string{'s': "search", 'i': "info", 'l': "list", 'g': "groups", 'p': "print", 'y': "refresh", 'u': "sysupgrade", 'c': "clean", 'w': "downloadonly"}
)
