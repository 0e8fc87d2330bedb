package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A script is one session of the ordinary corpus, or one case of the attack
// corpus: an ordered list of steps in one project, sharing one session id.
type script struct {
	Name     string
	Group    string // the corpus file it came from, without extension
	Project  string // which testdata/projects directory the world copies
	Requires []string
	Cwd      string     // the working directory the host reports and runs in ("" = the project)
	Worktree string     // a linked worktree the host makes first, as claude --worktree NAME does
	Files    []fileSpec // written into the project before the first step
	Steps    []step
	Line     int
}

// fileSpec is a file the harness writes into the project before the first
// step: a plain file, or an archive holding one member with this content.
type fileSpec struct {
	Path    string
	Kind    string // "file", "tar" or "zip"
	Member  string // the archive member's name (may be absolute, may climb)
	Content string
}

// A step is one tool call (a Bash command, unless Tool names another of
// Claude Code's tools) and what ordinary work expects of it.
type step struct {
	Tool     string // "" for Bash; else the tool, and Command is its tool_input as JSON
	Command  string
	Line     int
	Ask      bool          // the hook must ask (a push, docker, ssh)
	Exit     int           // the exit status wanted when it runs
	Timeout  time.Duration // 0: the default
	Contains []string      // the output must contain each
	Lacks    []string      // the output must not contain any
	FileHas  []fileCheck   // project files that must exist (and contain)
	FileGone []string      // project files that must not exist
}

type fileCheck struct{ Path, Text string }

// parseCorpus reads a corpus file whose scripts run in project unless they
// name another ("" = the file's own name: go.txt runs in projects/go). The
// format (testdata/README.md):
//
//	# comment
//	## NAME            a session or case starts
//	@project KIND      the project it runs in
//	@requires TOOL…    skipped when a tool is not installed
//	@cwd PATH          the working directory the host reports and runs in
//	@worktree NAME     the session runs in a worktree made as claude --worktree makes it
//	@file PATH         a project file, its lines follow as "| …"
//	@tar PATH MEMBER   a tar archive with one member, lines follow as "| …"
//	@zip PATH MEMBER   a zip archive with one member, lines follow as "| …"
//	$ COMMAND          a step; continuation lines follow as "| …"
//	% TOOL JSON        a call of another tool with this tool_input
//	> TEXT             the output contains TEXT
//	!> TEXT            the output does not contain TEXT
//	= PATH [TEXT]      the project file exists (and contains TEXT)
//	- PATH             the project file does not exist
//	? ask | exit N | timeout DURATION
func parseCorpus(name, data, project string) ([]script, error) {
	group := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if project == "" {
		project = group
	}
	var (
		out   []script
		cur   *script
		block *string // where "| " lines go
	)
	errf := func(n int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, args...))
	}
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "|" || strings.HasPrefix(line, "| ") {
			if block == nil {
				return nil, errf(n, "a | line belongs to a $ step or an @file, and follows one")
			}
			*block += "\n" + strings.TrimPrefix(strings.TrimPrefix(line, "|"), " ")
			continue
		}
		block = nil
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "# ") || trimmed == "#" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "## "); ok {
			out = append(out, script{Name: strings.TrimSpace(rest), Group: group, Project: project, Line: n})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			return nil, errf(n, "%q comes before the first ## NAME line", line)
		}
		word, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		last := func() (*step, error) {
			if len(cur.Steps) == 0 {
				return nil, errf(n, "%q must follow a $ step", line)
			}
			return &cur.Steps[len(cur.Steps)-1], nil
		}
		switch word {
		case "@project":
			cur.Project = arg
		case "@requires":
			cur.Requires = append(cur.Requires, strings.Fields(arg)...)
		case "@cwd":
			if arg == "" {
				return nil, errf(n, "@cwd wants a path")
			}
			cur.Cwd = arg
		case "@worktree":
			if arg == "" || strings.ContainsAny(arg, "/ \t") || strings.HasPrefix(arg, ".") {
				return nil, errf(n, "@worktree wants a name (no slash, space or leading dot)")
			}
			cur.Worktree = arg
			if cur.Cwd == "" {
				cur.Cwd = "{{PROJECT}}/.claude/worktrees/" + arg
			}
		case "@file", "@tar", "@zip":
			if len(cur.Steps) > 0 {
				return nil, errf(n, "%s must come before the first step", word)
			}
			f := fileSpec{Kind: strings.TrimPrefix(word, "@")}
			fields := strings.Fields(arg)
			switch {
			case f.Kind == "file" && len(fields) == 1:
				f.Path = fields[0]
			case f.Kind != "file" && len(fields) == 2:
				f.Path, f.Member = fields[0], fields[1]
			default:
				return nil, errf(n, "%s wants %s", word, map[bool]string{true: "PATH", false: "PATH MEMBER"}[f.Kind == "file"])
			}
			cur.Files = append(cur.Files, f)
			block = &cur.Files[len(cur.Files)-1].Content
		case "$":
			if arg == "" {
				return nil, errf(n, "empty command")
			}
			cur.Steps = append(cur.Steps, step{Command: strings.TrimPrefix(line, "$ "), Line: n})
			block = &cur.Steps[len(cur.Steps)-1].Command
		case "%":
			tool, input, _ := strings.Cut(arg, " ")
			if tool == "" || tool == "Bash" || strings.TrimSpace(input) == "" {
				return nil, errf(n, "%% wants a tool other than Bash and its tool_input as JSON")
			}
			cur.Steps = append(cur.Steps, step{Tool: tool, Command: strings.TrimSpace(input), Line: n})
			block = &cur.Steps[len(cur.Steps)-1].Command
		case ">", "!>":
			s, err := last()
			if err != nil {
				return nil, err
			}
			if arg == "" {
				return nil, errf(n, "%s wants a text", word)
			}
			if word == ">" {
				s.Contains = append(s.Contains, arg)
			} else {
				s.Lacks = append(s.Lacks, arg)
			}
		case "=":
			s, err := last()
			if err != nil {
				return nil, err
			}
			path, text, _ := strings.Cut(arg, " ")
			if path == "" {
				return nil, errf(n, "= wants a path")
			}
			s.FileHas = append(s.FileHas, fileCheck{path, strings.TrimSpace(text)})
		case "-":
			s, err := last()
			if err != nil {
				return nil, err
			}
			if arg == "" {
				return nil, errf(n, "- wants a path")
			}
			s.FileGone = append(s.FileGone, arg)
		case "?":
			s, err := last()
			if err != nil {
				return nil, err
			}
			what, val, _ := strings.Cut(arg, " ")
			switch what {
			case "ask":
				s.Ask = true
			case "exit":
				code, err := strconv.Atoi(strings.TrimSpace(val))
				if err != nil {
					return nil, errf(n, "? exit wants a number, not %q", val)
				}
				s.Exit = code
			case "timeout":
				d, err := time.ParseDuration(strings.TrimSpace(val))
				if err != nil || d <= 0 {
					return nil, errf(n, "? timeout wants a duration, not %q", val)
				}
				s.Timeout = d
			default:
				return nil, errf(n, "? wants ask, exit N or timeout D, not %q", arg)
			}
		default:
			return nil, errf(n, "unknown line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range out {
		s := &out[i]
		if len(s.Steps) == 0 {
			return nil, fmt.Errorf("%s:%d: %s has no steps", name, s.Line, s.Name)
		}
		for _, st := range s.Steps {
			if st.Tool != "" && !json.Valid([]byte(st.Command)) {
				return nil, fmt.Errorf("%s:%d: the tool_input of %s is not JSON", name, st.Line, st.Tool)
			}
		}
		// Each "| " line added "\n" and itself: a file is its lines, each
		// ended by a newline.
		for j := range s.Files {
			s.Files[j].Content = strings.TrimPrefix(s.Files[j].Content, "\n") + "\n"
		}
	}
	return out, nil
}

// loadCorpus parses every *.txt file in dir, in name order; see parseCorpus
// for project.
func loadCorpus(t *testing.T, dir, project string) []script {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no corpus files in %s (%v)", dir, err)
	}
	var all []script
	seen := map[string]bool{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		scripts, err := parseCorpus(name, string(data), project)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scripts {
			id := s.Group + "/" + s.Name
			if seen[id] {
				t.Fatalf("%s: two scripts are named %s", name, id)
			}
			seen[id] = true
		}
		all = append(all, scripts...)
	}
	return all
}

func TestParseCorpus(t *testing.T) {
	const src = `# a comment
## first
@project go
@requires go git
@file Makefile
| all:
| 	echo hi
|
@tar evil.tar /abs/path
| payload
$ cat > x <<'EOF'
| line one
| EOF
> one
!> two
= x line
- y
? exit 3
? timeout 2m
$ git push
? ask
% Read {"file_path":
| "{{HOME}}/x"}
## second
@cwd {{HOME}}/.config
$ true
`
	got, err := parseCorpus("testdata/demo.txt", src, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("parseCorpus: %d scripts, want 2", len(got))
	}
	s := got[0]
	if s.Group != "demo" || s.Project != "go" || strings.Join(s.Requires, ",") != "go,git" {
		t.Errorf("header = %q %q %q", s.Group, s.Project, s.Requires)
	}
	if len(s.Files) != 2 || s.Files[0].Content != "all:\n\techo hi\n\n" || s.Files[1].Member != "/abs/path" || s.Files[1].Kind != "tar" {
		t.Errorf("files = %+v", s.Files)
	}
	st := s.Steps[0]
	if st.Command != "cat > x <<'EOF'\nline one\nEOF" || st.Exit != 3 || st.Timeout != 2*time.Minute ||
		st.Contains[0] != "one" || st.Lacks[0] != "two" || st.FileHas[0] != (fileCheck{"x", "line"}) || st.FileGone[0] != "y" {
		t.Errorf("step = %+v", st)
	}
	if !s.Steps[1].Ask || got[1].Project != "demo" {
		t.Errorf("ask step or default project wrong: %+v %q", s.Steps[1], got[1].Project)
	}
	if rd := s.Steps[2]; rd.Tool != "Read" || rd.Command != "{\"file_path\":\n\"{{HOME}}/x\"}" || got[1].Cwd != "{{HOME}}/.config" {
		t.Errorf("tool step or @cwd wrong: %+v %q", rd, got[1].Cwd)
	}
	for _, bad := range []string{
		"$ true\n",                   // before a name
		"## a\n| x\n",                // continuation without a step
		"## a\n$ true\n? exit x\n",   // bad exit
		"## a\n$ true\n@file f\n",    // file after a step
		"## a\n",                     // no steps
		"## a\n$ true\nfrobnicate\n", // unknown line
		"## a\n% Read {\n",           // tool_input not JSON
		"## a\n% Bash {}\n",          // Bash is written with $
		"## a\n@cwd\n$ true\n",       // @cwd without a path
	} {
		if _, err := parseCorpus("bad.txt", bad, ""); err == nil {
			t.Errorf("parseCorpus(%q) = nil error, want one", bad)
		}
	}
}
