package shellguard

import (
	"strings"
	"sync"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// The prefilter answers the common all-read-only case without parsing: a
// single plain command (no shell metacharacters at all) whose program is a
// pure reader and whose text mentions nothing sensitive. Anything else goes
// to the full classifier, so the prefilter can only allow what the full
// classifier allows (a property the tests check).

//
// The sensitive words are few (about twenty) and the input is at most 512
// bytes, so a plain scan is used: building an Aho-Corasick automaton cost a
// one-shot hook process about 0.2 ms, more than scanning ever does.

var (
	prefilterOnce sync.Once
	pureReaders   *nameSet
)

// sensitiveWords make the prefilter defer to the full classifier.
var sensitiveWords = []string{".ssh", ".aws", ".gnupg", ".kube", ".env", ".netrc", "authorized_keys", "/dev/", "credentials", "id_rsa", "id_ed25519", "shadow", ".git-credentials", "--pre", "-exec", "-delete", "--output", "-o", "-f", "/proc/"}

func buildPrefilter() {
	pureReaders = setOf("ls", "pwd", "whoami", "date", "uname", "cat", "head", "tail", "wc", "grep", "rg",
		"echo", "true", "df", "du", "ps", "uptime", "id", "hostname", "which", "file", "stat", "tree", "jq", "diff")
}

// prefilter returns (allow, true) when src is one read-only command.
func prefilter(src string) (warden.Verdict, bool) {
	if len(src) == 0 || len(src) > 512 {
		return warden.Deny, false
	}
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if ch >= 0x80 || ch < 0x20 && ch != '\t' {
			return warden.Deny, false
		}
		switch ch {
		case ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '*', '?', '[', ']', '~', '\'', '"', '\\', '#', '=', '!', '%', '^':
			return warden.Deny, false
		}
	}
	prefilterOnce.Do(buildPrefilter)
	prog, _, _ := strings.Cut(strings.TrimSpace(src), " ")
	if !pureReaders.has(prog) {
		return warden.Deny, false
	}
	for _, w := range sensitiveWords {
		if strings.Contains(src, w) {
			return warden.Deny, false
		}
	}
	return warden.Allow, true
}

// plainOperandDenied reports whether a command the prefilter would allow
// names, as one of its words, a path the filesystem policy denies, or reads
// whole trees (grep -r, rg), which may hold one; the full classifier then
// judges it. The prefilter's input has no quotes, variables or globs, so its
// words are the command's words.
func (p *Policy) plainOperandDenied(src, cwd string) bool {
	if p.Paths == nil {
		return false
	}
	words := strings.Fields(src)
	var buf [8]walk.Word // the prefilter's commands are short: no allocation
	args := buf[:0]
	for _, w := range words[1:] {
		args = append(args, walk.Word{Value: w})
	}
	if readsTrees(words[0], args) {
		return true
	}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		if _, denied := p.Paths.Denied(w, cwd); denied {
			return true
		}
	}
	return false
}
