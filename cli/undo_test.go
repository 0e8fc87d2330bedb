package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// TestHookDiscardIsUndone plays an agent host: Claude Code's hook is asked
// about each discard, and runs the command it rewrote into warden exec, in
// a real sandbox; warden undo then brings the work back byte for byte
// (binary files, files in new directories, deleted files). The same
// discards through Cursor's hook, which cannot run a command in warden's
// sandbox, are asked about.
func TestHookDiscardIsUndone(t *testing.T) {
	t.Parallel() // it waits on processes; it shares nothing with other tests
	if !slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard) {
		t.Skip("this kernel cannot run the standard sandbox (user namespaces, Landlock and seccomp are needed)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := initHome(t)
	project := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = project
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	put := func(p string, b []byte) {
		t.Helper()
		full := filepath.Join(project, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	put("main.go", []byte("package main\n"))
	put("data.bin", []byte{0, 1, 2, 3})
	put("old.txt", []byte("old\n"))
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")

	// The agent's uncommitted work.
	work := map[string][]byte{
		"main.go":           []byte("package main\n\nfunc main() { println(\"work\") }\n"),
		"data.bin":          {0xff, 0x00, 0xfe, '\r', '\n', 0x80},
		"notes/today/a.txt": []byte("untracked, in new directories\n"),
	}
	setWork := func() {
		for p, b := range work {
			put(p, b)
		}
		_ = os.Remove(filepath.Join(project, "old.txt"))
	}
	check := func(when string) {
		t.Helper()
		for p, want := range work {
			got, err := os.ReadFile(filepath.Join(project, p))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %s = %q (%v), want %q", when, p, got, err, want)
			}
		}
		if _, err := os.Stat(filepath.Join(project, "old.txt")); err == nil {
			t.Errorf("%s: old.txt, deleted in the work, is back", when)
		}
	}
	hook := func(host, payload string) []byte {
		t.Helper()
		cmd := wardenCmd(home, "hook", host)
		cmd.Stdin = strings.NewReader(payload)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("warden hook %s: %v\n%s", host, err, out)
		}
		return out
	}
	for _, discard := range []string{"git checkout -- .", "git reset --hard", "git clean -fd", "git restore . && git clean -fd"} {
		t.Run(discard, func(t *testing.T) {
			setWork()
			q, _ := json.Marshal(discard)
			cursor := hook("cursor", `{"hook_event_name":"beforeShellExecution","conversation_id":"c1","cwd":"`+project+`","command":`+string(q)+`}`)
			if !strings.Contains(string(cursor), `"permission":"ask"`) {
				t.Errorf("Cursor's hook answered %s, want an ask", cursor)
			}
			out := hook("claude", `{"hook_event_name":"PreToolUse","session_id":"s1","cwd":"`+project+`","tool_name":"Bash","tool_input":{"command":`+string(q)+`}}`)
			var answer struct {
				HookSpecificOutput struct {
					PermissionDecision string
					UpdatedInput       struct{ Command string }
				}
			}
			if err := json.Unmarshal(out, &answer); err != nil || answer.HookSpecificOutput.PermissionDecision != "allow" {
				t.Fatalf("Claude Code's hook answered %s (%v), want an allow", out, err)
			}
			run := exec.Command("bash", "-c", answer.HookSpecificOutput.UpdatedInput.Command)
			run.Env = append(os.Environ(), "WARDEN_AS_CLI=1", "WARDEN_HOME="+home)
			run.Dir = project
			if got, err := run.CombinedOutput(); err != nil {
				t.Fatalf("running %q: %v\n%s", answer.HookSpecificOutput.UpdatedInput.Command, err, got)
			}
			if b, _ := os.ReadFile(filepath.Join(project, "main.go")); bytes.Equal(b, work["main.go"]) && discard != "git clean -fd" {
				t.Fatalf("%s did not discard main.go", discard)
			}
			undo := wardenCmd(home, "undo")
			undo.Dir = project
			got, err := undo.CombinedOutput()
			if err != nil || !strings.Contains(string(got), "restored snapshot") {
				t.Fatalf("warden undo: %v\n%s", err, got)
			}
			check("after warden undo")
		})
	}
	end := wardenCmd(home, "hook", "claude")
	end.Stdin = strings.NewReader(`{"hook_event_name":"SessionEnd","session_id":"s1","reason":"exit"}`)
	_ = end.Run()
}

// BenchmarkExecDiscard is what saving the work costs a discard run through
// warden exec in a session's sandbox world: `git checkout -- a.txt` (a
// snapshot first, with git run in the world) against `git diff --quiet`
// (nothing to save), both in a repository of 1,000 files, each a whole
// warden exec process as a hook's rewrite runs it.
func BenchmarkExecDiscard(b *testing.B) {
	if !slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard) {
		b.Skip("this kernel cannot run the standard sandbox (user namespaces, Landlock and seccomp are needed)")
	}
	home := filepath.Join(b.TempDir(), "home")
	if out, err := wardenCmd(home, "init").CombinedOutput(); err != nil {
		b.Fatalf("warden init: %v\n%s", err, out)
	}
	project := b.TempDir()
	gitIn := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = project
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q")
	for i := range 1000 {
		p := filepath.Join(project, "src", strconv.Itoa(i%40), strconv.Itoa(i)+".go")
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("one\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	gitIn("add", "-A")
	gitIn("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
	run := func(b *testing.B, args ...string) {
		cmd := wardenCmd(home, append([]string{"exec", "--no-wait", "--session", "bench"}, args...)...)
		cmd.Dir = project
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("warden exec %v: %v\n%s", args, err, out)
		}
	}
	run(b, "true") // the world starts
	for _, c := range []struct {
		name string
		args []string
	}{
		{"nothing to save", []string{"git", "diff", "--quiet", "--", "src"}},
		{"discard saved", []string{"git", "checkout", "--", "a.txt"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("work\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				run(b, c.args...)
			}
		})
	}
	end := wardenCmd(home, "hook", "claude")
	end.Stdin = strings.NewReader(`{"hook_event_name":"SessionEnd","session_id":"bench","reason":"exit"}`)
	_ = end.Run()
}

// TestUndoPrintsNoTerminalControls: what warden undo prints of a snapshot
// (its command, read from a commit an agent can write) and of the work
// tree (file names an agent chose) reaches the user's terminal with its
// control characters made visible, never as escape sequences.
func TestUndoPrintsNoTerminalControls(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	project := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = project
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
	// A snapshot that adds a file named with an escape sequence, taken
	// "before" a command that holds one.
	if err := os.WriteFile(filepath.Join(project, "x\x1b[2Jy"), []byte("z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	tree := git("write-tree")
	git("rm", "-q", "--cached", "x\x1b[2Jy")
	if err := os.Remove(filepath.Join(project, "x\x1b[2Jy")); err != nil {
		t.Fatal(err)
	}
	commit := git("-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", "-m", "warden undo: x\n\nWarden-Command: rm \x1b]0;owned\x07 -rf\n", tree)
	git("update-ref", "refs/warden/undo/20261128-000000.000000-00000000", commit)
	home := initHome(t)
	for _, args := range [][]string{{"undo", "--list"}, {"undo"}} {
		cmd := wardenCmd(home, args...)
		cmd.Dir = project
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("warden %v: %v\n%s", args, err, out)
		}
		if bytes.ContainsAny(out, "\x1b\x07") {
			t.Errorf("warden %v printed terminal controls: %q", args, out)
		}
	}
}
