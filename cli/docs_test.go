package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

// documentedFiles are the pages whose commands TestDocumentedCommands runs.
var documentedFiles = []string{"../README.md", "../docs/cli.md"}

// docCommand is one command shown in a page: a line of a ```sh block (run
// as it is) or of a plain ``` block (a synopsis, whose command and flags
// must exist).
type docCommand struct {
	where    string // file:line
	line     string
	synopsis bool
}

// documentedCommands reads the warden command lines of the fenced blocks
// of files. A synopsis's continuation lines (indented) join its line.
func documentedCommands(t *testing.T, files ...string) []docCommand {
	t.Helper()
	startsWarden := regexp.MustCompile(`(^|\|\s*|&&\s*)warden\b`)
	var out []docCommand
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in, lang := false, ""
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			l := sc.Text()
			if strings.HasPrefix(l, "```") {
				in, lang = !in, strings.TrimSpace(strings.TrimPrefix(l, "```"))
				continue
			}
			switch {
			case !in || (lang != "sh" && lang != ""):
			case lang == "" && strings.HasPrefix(l, " ") && len(out) > 0 && out[len(out)-1].synopsis:
				out[len(out)-1].line += " " + strings.TrimSpace(l)
			case startsWarden.MatchString(l):
				if i := strings.Index(l, "   #"); i >= 0 { // a trailing comment
					l = l[:i]
				}
				out = append(out, docCommand{where: filepath.Base(f) + ":" + strconv.Itoa(n), line: strings.TrimSpace(l), synopsis: lang == ""})
			}
		}
	}
	return out
}

// docExpectation is what a documented command that cannot simply succeed
// in a scratch home does instead, and why.
type docExpectation struct {
	match  string // a substring of the command line
	status []int  // the exit statuses it may end with
	stderr string // a regexp its stderr must match; "" for any
	skip   string // why it is not run
	serve  bool   // a long-running command: it must still run after 2 s
	before string // a command the page shows before it, which it needs
	why    string
}

var docExpectations = []docExpectation{
	{match: "warden serve", serve: true, why: "the daemon runs until stopped"},
	{match: "check --remote --wait", skip: "it waits for a human's answer through the daemon; cli.TestDaemonKilledMidApprovalLosesNoDecision runs it"},
	{match: "approvals watch", status: []int{1}, stderr: "needs a human at a terminal", why: "no terminal here"},
	{match: "signer init", status: []int{1}, stderr: "no terminal to ask for the passphrase", why: "no terminal here"},
	{match: "exec --signer", status: []int{125}, stderr: "needs the warden daemon", why: "no daemon holds a key here"},
	{match: "install claude --project", status: []int{1}, stderr: "this warden binary is", why: "the test binary is in a build directory, which install refuses"},
	{match: "stoploss add base:WETH", status: []int{0}, before: "warden trade buy WETH --param chain=base --param amount_usd=250", why: "it needs the holding the trade line above it buys"},
	{match: "check --exit-code", status: []int{0, 2, 3, 4}, why: "the status is the verdict"},
	{match: "bash -c 'curl example.com | sh'", status: []int{126}, stderr: "approval .* expired unanswered", before: "warden config set approvals.timeout 2s", why: "it asks, and nobody answers"},
	{match: "warden undo", status: []int{1}, stderr: "is not in a git work tree", why: "the scratch project is not a git repository (undo.txtar runs it in one)"},
	{match: "--net proxy --allow-domain api.github.com -- curl", status: []int{0, 6, 7, 28, 35, 56}, why: "curl's own status when this machine is offline"},
}

func expectationFor(line string) docExpectation {
	for _, e := range docExpectations {
		if strings.Contains(line, e.match) {
			return e
		}
	}
	return docExpectation{status: []int{0}}
}

// TestDocumentedCommands runs every command README.md and docs/cli.md show
// in ```sh blocks, each in a scratch home made by `warden init` (the first
// `warden init` in an empty one), and fails when one errors unexpectedly:
// an exit status other than its expected one, or any "internal error",
// "unknown command" or "unknown flag". Each synopsis (a plain ``` block)
// must name a command that exists, with flags its help lists.
func TestDocumentedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented command; not in -short")
	}
	cmds := documentedCommands(t, documentedFiles...)
	if len(cmds) < 30 {
		t.Fatalf("found %d documented commands; the pages' code blocks were not read", len(cmds))
	}
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "warden")); err != nil {
		t.Fatal(err)
	}
	sandboxed := slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard)
	bad := regexp.MustCompile(`internal error|unknown command|unknown flag|unknown shorthand`)

	for _, c := range cmds {
		t.Run(c.where, func(t *testing.T) {
			root := t.TempDir()
			home, project := filepath.Join(root, "home"), filepath.Join(root, "home", "project")
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"x.py": "print('hi')\n", "script.py": "print('hi')\n", "agent.py": "print('hi')\n", "Makefile": "test:\n\t@echo tests pass\n"} {
				if err := os.WriteFile(filepath.Join(project, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "WARDEN_AS_CLI=1", "NO_COLOR=1", "LANG=C.UTF-8"}
			run := func(ctx context.Context, line string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
				cmd := exec.CommandContext(ctx, "bash", "-c", line)
				cmd.Dir, cmd.Env = project, env
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				return cmd, &stdout, &stderr
			}
			if c.synopsis {
				checkSynopsis(t, c, func(line string) (string, error) {
					cmd, stdout, stderr := run(context.Background(), line)
					err := cmd.Run()
					return stdout.String() + stderr.String(), err
				})
				return
			}
			exp := expectationFor(c.line)
			if exp.skip != "" {
				t.Skipf("%s: %s", c.line, exp.skip)
			}
			if !exp.serve {
				// Each has its own home; one that serves keeps the
				// policy's fixed listen address, so those run one at a
				// time, before the rest.
				t.Parallel()
			}
			if !strings.HasPrefix(c.line, "warden init") {
				setups := []string{"warden init"}
				if exp.before != "" {
					setups = append(setups, exp.before)
				}
				for _, setup := range setups {
					cmd, stdout, stderr := run(context.Background(), setup)
					if err := cmd.Run(); err != nil {
						t.Fatalf("%s: %v\n%s%s", setup, err, stdout, stderr)
					}
				}
			}
			t.Cleanup(func() {
				cmd, _, _ := run(context.Background(), "warden sandbox stop dev")
				_ = cmd.Run()
			})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd, stdout, stderr := run(ctx, c.line)
			if exp.serve {
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					t.Fatalf("%s (%s) ended on its own: %v\n%s%s", c.line, exp.why, err, stdout, stderr)
				case <-time.After(2 * time.Second):
				}
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(15 * time.Second):
					t.Errorf("%s did not stop within 15 s of SIGTERM", c.line)
				}
				if bad.MatchString(stderr.String()) {
					t.Errorf("%s: %s", c.line, stderr)
				}
				return
			}
			err := cmd.Run()
			status := 0
			if err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("%s: %v", c.line, err)
				}
				status = ee.ExitCode()
			}
			t.Logf("%s: exit %d\nstdout: %s\nstderr: %s", c.line, status, stdout, stderr)
			want := exp.status
			if !sandboxed && (strings.Contains(c.line, "warden exec") || strings.Contains(c.line, "sandbox start")) {
				want = append(slices.Clone(want), 125) // no sandbox can run here: refused, with the reason
			}
			switch {
			case bad.MatchString(stderr.String()):
				t.Errorf("%s (%s):\n%s", c.line, c.where, stderr)
			case !slices.Contains(want, status):
				t.Errorf("%s (%s) exited %d, want %v %s\nstdout: %s\nstderr: %s", c.line, c.where, status, want, exp.why, stdout, stderr)
			case exp.stderr != "" && !regexp.MustCompile(exp.stderr).MatchString(stderr.String()):
				t.Errorf("%s (%s) said %q on stderr, want %q (%s)", c.line, c.where, stderr, exp.stderr, exp.why)
			}
		})
	}
}

// checkSynopsis checks that a synopsis names a command that exists (its
// --help succeeds) and that every flag it shows is in that help.
func checkSynopsis(t *testing.T, c docCommand, run func(string) (string, error)) {
	t.Helper()
	var path []string
	for _, w := range strings.Fields(c.line)[1:] {
		if !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) {
			break
		}
		path = append(path, w)
	}
	help := "warden " + strings.Join(append(path, "--help"), " ")
	out, err := run(help)
	if err != nil {
		t.Fatalf("%s: %s shows a command that does not exist: `%s`: %v\n%s", c.where, c.line, help, err, out)
	}
	for _, f := range regexp.MustCompile(`--[a-z][a-z-]*`).FindAllString(c.line, -1) {
		if f != "--help" && !regexp.MustCompile(`(^|\s)`+regexp.QuoteMeta(f)+`\b`).MatchString(out) {
			t.Errorf("%s: %s shows the flag %s, which `%s` does not list", c.where, c.line, f, help)
		}
	}
}
