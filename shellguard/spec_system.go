package shellguard

import (
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
)

// handlerTable lists every program with its own handler.
func handlerTable() map[string]handler {
	t := map[string]handler{}
	fsHandlers(t)
	t["git"] = hGit
	grammarSrc["git"] = gitGlobal
	for name, s := range gitSubs {
		if s.opts != "" {
			grammarSrc["git "+name] = s.opts
		}
	}
	for name, src := range gitRemoteGrammars {
		grammarSrc["git "+name] = src
	}
	systemHandlers(t)
	processHandlers(t)
	toolHandlers(t)
	for _, n := range shellNames {
		t[n] = hShell
	}
	for _, n := range interpreterNames {
		t[n] = hInterpreter
	}
	return t
}

// programEffect pairs a program with what it does, for reasons.
type programEffect struct{ name, what string }

// systemState are programs that change the whole machine: denied.
var systemState = []programEffect{
	{"shutdown", "shuts the machine down"}, {"reboot", "reboots the machine"}, {"halt", "halts the machine"},
	{"poweroff", "powers the machine off"}, {"init", "changes the run level"}, {"telinit", "changes the run level"},
	{"passwd", "changes account passwords"}, {"userdel", "deletes a user account"}, {"groupdel", "deletes a group"},
	{"chpasswd", "changes passwords"}, {"deluser", "deletes a user account"}, {"visudo", "edits sudo rules"},
	{"kexec", "replaces the running kernel"}, {"setenforce", "changes SELinux enforcement"},
}

// systemConfig are programs that reconfigure the machine: asked, not denied.
var systemConfig = []programEffect{
	{"usermod", "changes a user account"}, {"useradd", "creates a user account"}, {"adduser", "creates a user account"},
	{"groupadd", "creates a group"}, {"insmod", "loads a kernel module"}, {"rmmod", "unloads a kernel module"},
	{"modprobe", "loads kernel modules"}, {"swapoff", "disables swap"}, {"swapon", "enables swap"},
	{"umount", "unmounts filesystems"}, {"nft", "changes the firewall"}, {"ufw", "changes the firewall"},
	{"sysctl", "changes kernel parameters"}, {"hostnamectl", "changes the host name"}, {"timedatectl", "changes the clock"},
}

func systemHandlers(t map[string]handler) {
	for _, pe := range systemConfig {
		what := pe.what
		t[pe.name] = func(cc *cmdCtx) {
			if len(cc.args) == 0 || hasArg(cc.args, "--help", "--version", "--dry-run", "status", "show", "list", "-a", "monitor") && !hasArg(cc.args, "-w") {
				return
			}
			cc.say(warden.Ask, "shell.system_config", fmt.Sprintf("%s %s", cc.name, what)).destructive = true
		}
	}
	for _, pe := range systemState {
		what := pe.what
		t[pe.name] = func(cc *cmdCtx) {
			if hasArg(cc.args, "--help", "--version") || cc.name == "passwd" && hasArg(cc.args, "-S", "--status") {
				return
			}
			cc.say(warden.Deny, "shell.system_state", fmt.Sprintf("%s %s", cc.name, what)).destructive = true
		}
	}
}

// hKillByName: pkill and killall signal every process whose name matches.
// In the sandbox they reach only the session's own processes (its PID
// namespace, or Landlock's signal scope in light mode), as kill PID and
// kill $(pgrep …) do, so they are allowed there; where no sandbox can run,
// or with elevated privileges, they would reach the user's other programs
// and ask.
func hKillByName(cc *cmdCtx) {
	what := cc.name + " kills every process with a name"
	switch {
	case cc.cmd.Privileged:
		cc.say(warden.Ask, "shell.kill_by_name", what+", with elevated privileges")
	case !cc.c.p.SandboxAvailable:
		cc.say(warden.Ask, "shell.kill_by_name", what+", and no sandbox keeps it to the agent's own processes")
	}
}

// processHandlers covers signals, firewalls, services, scheduled jobs,
// system packages and privilege changes.
func processHandlers(t map[string]handler) {
	t["kill"] = func(cc *cmdCtx) {
		args := cc.args
		if len(args) > 1 && (args[0].Value == "-s" || args[0].Value == "-n") {
			args = args[2:]
		} else if len(args) > 1 && strings.HasPrefix(args[0].Value, "-") && args[0].Value != "--" {
			args = args[1:]
		}
		for _, a := range args {
			if a.Value == "-1" || a.Value == "1" {
				cc.say(warden.Deny, "shell.system_state.kill_all", "kill -1 signals every process, kill 1 signals init").destructive = true
				return
			}
		}
	}
	t["killall"] = hKillByName
	t["pkill"] = hKillByName
	t["iptables"] = hFirewall
	t["ip6tables"] = hFirewall
	t["iptables-restore"] = hFirewall
	t["systemctl"] = func(cc *cmdCtx) {
		sub := firstOperand(cc)
		switch sub {
		case "", "status", "show", "list-units", "list-unit-files", "list-timers", "list-sockets", "is-active", "is-enabled", "is-failed", "cat", "help", "--version", "get-default", "list-dependencies":
			return
		case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "rescue", "emergency", "isolate", "default", "set-default":
			cc.say(warden.Deny, "shell.system_state", "systemctl "+sub+" changes the machine's state").destructive = true
		case "enable", "link", "preset", "edit", "mask", "add-wants", "add-requires", "revert":
			cc.say(warden.Ask, "shell.persist.systemd", "systemctl "+sub+" changes which services start at boot")
		default:
			cc.say(warden.Ask, "shell.service", "systemctl "+sub+" changes running services")
		}
	}
	t["service"] = func(cc *cmdCtx) { cc.say(warden.Ask, "shell.service", "service changes running services") }
	t["launchctl"] = func(cc *cmdCtx) {
		if s := firstOperand(cc); s == "list" || s == "print" || s == "help" {
			return
		}
		cc.say(warden.Ask, "shell.persist.launchd", "launchctl changes launchd services")
	}
	t["crontab"] = func(cc *cmdCtx) {
		for _, a := range cc.args {
			switch a.Value {
			case "-l":
				continue
			case "-r", "-ir":
				cc.say(warden.Deny, "shell.persist.crontab", "crontab -r deletes every scheduled job").destructive = true
				return
			case "-e":
				cc.say(warden.Ask, "shell.persist.crontab", "crontab -e edits scheduled jobs")
				return
			}
		}
		if hasArg(cc.args, "-l") {
			return
		}
		cc.say(warden.Deny, "shell.persist.crontab", "crontab installs scheduled jobs, a persistence mechanism").destructive = true
	}
	t["at"] = func(cc *cmdCtx) { cc.say(warden.Ask, "shell.persist.at", "at schedules commands to run later") }
	t["batch"] = t["at"]
	for _, n := range []string{"apt", "apt-get", "apt-cache", "yum", "dnf", "zypper", "pacman", "apk", "brew", "port", "snap", "flatpak", "dpkg", "rpm", "emerge", "nix-env"} {
		t[n] = hSystemPkg
	}
	t["sudo"] = func(cc *cmdCtx) { cc.say(warden.Ask, "shell.privilege", "sudo with no command opens a root shell") }
	t["su"] = func(cc *cmdCtx) { cc.say(warden.Ask, "shell.privilege", "su opens a shell as another user") }
	t["chroot"] = func(cc *cmdCtx) { cc.say(warden.Ask, "shell.privilege", "chroot runs a command in another root") }
	t["mount"] = func(cc *cmdCtx) {
		if len(cc.args) > 0 {
			cc.say(warden.Ask, "shell.mount", "mount changes the filesystem layout")
		}
	}
}

func firstOperand(cc *cmdCtx) string {
	for _, a := range cc.args {
		if !strings.HasPrefix(a.Value, "-") || a.Value == "--version" {
			return a.Value
		}
	}
	return ""
}

func hFirewall(cc *cmdCtx) {
	for i, a := range cc.args {
		v := a.Value
		switch {
		case v == "-L" || v == "--list" || v == "-S" || v == "--list-rules" || v == "-n" || v == "-v" || v == "--line-numbers" || v == "-t" || i > 0 && cc.args[i-1].Value == "-t":
			continue
		case v == "-F" || v == "--flush" || v == "-X" || v == "--delete-chain" || v == "-Z" || v == "-P" || v == "--policy":
			cc.say(warden.Deny, "shell.system_state.firewall", cc.name+" "+v+" removes or replaces firewall rules").destructive = true
			return
		case strings.HasPrefix(v, "-"):
			cc.say(warden.Ask, "shell.firewall", cc.name+" changes firewall rules")
			return
		}
	}
	if cc.name == "iptables-restore" {
		cc.say(warden.Ask, "shell.firewall", "iptables-restore replaces firewall rules")
	}
}
