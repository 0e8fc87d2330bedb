package shellguard

import (
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// markSecretRead records that a command reads secrets (env, ~/.ssh keys,
// .env files); dataflow denies the line if they can reach the network.
func (c *ctx) markSecretRead(cmd *walk.Command) {
	c.trace = append(c.trace, "secret read at "+spanString(cmd.Span))
	c.secretReads = append(c.secretReads, cmd)
}

func spanString(s walk.Span) string {
	return strings.Join([]string{itoa(s.Start), itoa(s.End)}, "-")
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

// fedByPipe reports a command whose arguments come from its stdin.
func fedByPipe(cmd *walk.Command) bool {
	for _, w := range cmd.Wrappers {
		if w == "xargs" || w == "parallel" {
			return true
		}
	}
	return len(cmd.Argv) > 0 && (cmd.Argv[0].Value == "xargs" || cmd.Argv[0].Value == "parallel")
}

func wrappedBy(cmd *walk.Command, name string) bool {
	for _, w := range cmd.Wrappers {
		if w == name {
			return true
		}
	}
	return false
}

// producerTargets are the paths a producer prints: find's start paths,
// echo's and ls's operands.
func producerTargets(cmd *walk.Command) []walk.Word {
	var out []walk.Word
	switch progName(cmd.Argv[0].Value) {
	case "find", "ls", "echo", "printf", "fd", "locate":
		for _, w := range cmd.Argv[1:] {
			if strings.HasPrefix(w.Value, "-") {
				if progName(cmd.Argv[0].Value) == "find" {
					break
				}
				continue
			}
			out = append(out, w)
		}
		if len(out) == 0 && progName(cmd.Argv[0].Value) != "echo" {
			out = append(out, walk.Word{Value: "."})
		}
	case "grep", "egrep", "fgrep", "rg":
		return listedMatches(cmd)
	}
	return out
}

// listedMatches returns the paths grep -l (or -L) and rg -l (or
// --files-without-match) search, whose names they print: the operands
// after the pattern, or the working directory when none is given. A grep
// that prints lines rather than names feeds no paths (nil).
func listedMatches(cmd *walk.Command) []walk.Word {
	rg := progName(cmd.Argv[0].Value) == "rg"
	names, patternGiven := false, false
	var ops []walk.Word
	args := cmd.Argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case v == "--files-with-matches" || v == "--files-without-match":
			names = true
		case v == "-e" || v == "-f" || v == "--regexp" || v == "--file":
			patternGiven = true
			i++
		case strings.HasPrefix(v, "--regexp=") || strings.HasPrefix(v, "--file="):
			patternGiven = true
		case strings.HasPrefix(v, "--"):
			if !strings.Contains(v, "=") && (v == "--include" || v == "--exclude" || v == "--exclude-dir" || v == "--glob" || v == "--type" || v == "--max-count" || v == "--context" || v == "--iglob" || v == "--type-not") {
				i++ // an option with a separate value
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			// A cluster of letters; one that takes a value (-e PAT, -f
			// FILE, -m N, -A/-B/-C N, -d/-D ACTION; rg's -g, -t, -T, -r,
			// -j, -M, -E too) ends it, with its value attached or next.
			valued := "efmABCdD"
			if rg {
				valued = "efmABCgtTrjME"
			}
			for k := 1; k < len(v); k++ {
				ch := v[k]
				if ch == 'l' || ch == 'L' {
					names = true
				}
				if strings.IndexByte(valued, ch) < 0 {
					continue
				}
				if ch == 'e' || ch == 'f' {
					patternGiven = true
				}
				if k == len(v)-1 {
					i++
				}
				break
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !names {
		return nil
	}
	if !patternGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return []walk.Word{{Value: "."}}
	}
	return ops
}

// netOutputFiles returns the files curl/wget write (-o, -O, --output).
func netOutputFiles(cmd *walk.Command) []string {
	var out []string
	args := cmd.Argv[1:]
	for i, a := range args {
		v := a.Value
		switch {
		case (v == "-o" || v == "--output" || v == "--output-document") && i+1 < len(args):
			if args[i+1].Value != "-" {
				out = append(out, args[i+1].Value)
			}
		case strings.HasPrefix(v, "--output=") || strings.HasPrefix(v, "--output-document="):
			_, f, _ := strings.Cut(v, "=")
			if f != "-" {
				out = append(out, f)
			}
		case v == "-O" && progName(cmd.Argv[0].Value) == "wget" && i+1 < len(args):
			if args[i+1].Value != "-" {
				out = append(out, args[i+1].Value)
			}
		}
	}
	return out
}

// netFetchStdout reports a network fetch whose body goes to stdout.
func netFetchStdout(cmd *walk.Command) bool {
	if len(cmd.Argv) == 0 {
		return false
	}
	switch progName(cmd.Argv[0].Value) {
	case "curl", "http", "xh":
		for _, a := range cmd.Argv[1:] {
			if a.Value == "-o" || a.Value == "-O" || a.Value == "--remote-name" || strings.HasPrefix(a.Value, "--output") {
				return hasArg(cmd.Argv, "-")
			}
		}
		return true
	case "wget":
		for i, a := range cmd.Argv[1:] {
			if (a.Value == "-O" || a.Value == "--output-document") && i+2 < len(cmd.Argv) && cmd.Argv[i+2].Value == "-" || a.Value == "-O-" || a.Value == "--output-document=-" || a.Value == "-qO-" {
				return true
			}
		}
		return false
	case "nc", "ncat", "netcat", "socat", "aws", "gsutil":
		return len(cmd.Argv) > 1
	}
	return false
}

// netSink reports a command that sends data to the network.
func netSink(cmd *walk.Command) bool {
	if len(cmd.Argv) == 0 {
		return false
	}
	switch progName(cmd.Argv[0].Value) {
	case "curl", "wget", "http", "xh", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "ftp", "rsync", "ssh", "mail", "sendmail", "mutt":
		return true
	}
	for _, r := range cmd.Redirects {
		if strings.HasPrefix(r.Target.Value, "/dev/tcp/") || strings.HasPrefix(r.Target.Value, "/dev/udp/") {
			return true
		}
	}
	return false
}

// isExecSink reports a shell or interpreter that runs code read from stdin.
func isExecSink(cmd *walk.Command) bool {
	if len(cmd.Argv) == 0 || cmd.Argv[0].Dynamic {
		return false
	}
	n := progName(cmd.Argv[0].Value)
	if isShell(n) {
		return !shellHasCode(cmd.Argv[1:])
	}
	if isInterpreter(n) {
		return interpReadsStdin(cmd.Argv[1:])
	}
	return false
}

// dataflow checks the flows between commands of the line.
func (c *ctx) dataflow() {
	cmds := c.walk.Commands
	netByPipe := map[int]*walk.Command{}
	for i := range cmds {
		cmd := &cmds[i]
		if cmd.PipeLen > 1 && netFetchStdout(cmd) {
			if prev, ok := netByPipe[cmd.Pipeline]; !ok || prev.PipePos > cmd.PipePos {
				netByPipe[cmd.Pipeline] = cmd
			}
		}
	}
	for i := range cmds {
		cmd := &cmds[i]
		if cmd.PipeLen > 1 && cmd.PipePos > 0 && isExecSink(cmd) {
			if src, ok := netByPipe[cmd.Pipeline]; ok && src.PipePos < cmd.PipePos {
				c.netExec(cmd, src)
			}
		}
		// A file downloaded earlier in the line, then run.
		if len(cmd.Argv) > 1 && !cmd.Argv[0].Dynamic && (isShell(progName(cmd.Argv[0].Value)) || isInterpreter(progName(cmd.Argv[0].Value)) || cmd.Argv[0].Value == "source" || cmd.Argv[0].Value == ".") {
			for _, a := range cmd.Argv[1:] {
				if c.netFiles[a.Value] {
					c.netExec(cmd, nil)
				}
			}
		}
		if len(cmd.Argv) > 0 && c.netFiles[cmd.Argv[0].Value] {
			c.netExec(cmd, nil)
		}
	}
	// Secrets reaching a network sink, in a pipe or anywhere in the line.
	if len(c.secretReads) > 0 {
		for i := range cmds {
			cmd := &cmds[i]
			if !netSink(cmd) {
				continue
			}
			for _, s := range c.secretReads {
				if s != cmd {
					c.add(finding{v: warden.Deny, rule: "shell.exfiltration", reason: "secrets read in this command line could reach a network sink"}, cmd.Span)
					break
				}
			}
		}
	}
	c.forkBomb()
}

// netPipedInto reports whether a network fetch writing to stdout comes
// earlier in cmd's pipeline.
func (c *ctx) netPipedInto(cmd *walk.Command) bool {
	for i := range c.walk.Commands {
		src := &c.walk.Commands[i]
		if src.Pipeline == cmd.Pipeline && src.PipePos < cmd.PipePos && netFetchStdout(src) {
			return true
		}
	}
	return false
}

// netExec judges code from the network being executed.
func (c *ctx) netExec(cmd *walk.Command, src *walk.Command) {
	f := finding{v: warden.Sandbox, rule: "shell.net_exec", reason: "code downloaded from the network would be executed; it runs in the sandbox",
		suggestion: ""}
	if cmd.Privileged {
		f.v, f.rule, f.reason = warden.Deny, "shell.net_exec.privileged", "code downloaded from the network would be executed with elevated privileges"
	}
	if src != nil {
		for _, a := range src.Argv[1:] {
			if h := urlHost(a.Value); h != "" && !isASCII(h) {
				f.v, f.rule, f.reason = warden.Deny, "shell.net_exec.homograph", "code from a URL whose host has non-ASCII characters (a homograph) would be executed"
			}
		}
	}
	c.add(f, cmd.Span)
}

// forkBomb detects a function that calls itself in a background pipeline.
func (c *ctx) forkBomb() {
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if len(cmd.Argv) == 0 || cmd.Argv[0].Dynamic {
			continue
		}
		name := cmd.Argv[0].Value
		if strings.HasPrefix(cmd.Via, "function ") && strings.TrimPrefix(cmd.Via, "function ") == name && (cmd.Background || cmd.PipeLen > 1) {
			c.add(finding{v: warden.Deny, rule: "shell.fork_bomb", reason: "a function that calls itself in the background exhausts the process table"}, cmd.Span)
			return
		}
	}
	// Lexical fallback: NAME(){ NAME|NAME& }.
	s := c.src
	if i := strings.Index(s, "(){"); i > 0 {
		j := i
		for j > 0 && s[j-1] != ' ' && s[j-1] != ';' && s[j-1] != '\n' {
			j--
		}
		name := s[j:i]
		body := s[i:]
		if name != "" && strings.Contains(body, name+"|"+name) && strings.Contains(body, "&") {
			c.add(finding{v: warden.Deny, rule: "shell.fork_bomb", reason: "a function that calls itself in the background exhausts the process table"}, walk.Span{Start: j, End: len(s)})
		}
	}
}
