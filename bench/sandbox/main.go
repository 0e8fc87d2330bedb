// Command hostrun runs one shell command the way an agent host does, so the
// sandbox benchmark can time the whole hook path beside the host's bare run.
//
// Without -warden it runs `bash -c COMMAND`, what a host does with no hook.
// With -warden it first sends Claude Code's PreToolUse payload for COMMAND to
// the hook command `warden install` writes (`[warden-exec] warden hook
// claude --home HOME`), requires an allow with a rewritten
// command (updatedInput.command), and runs that with `bash -c`: the hook plus
// a sandbox start, per command. Any other answer exits 1, so hyperfine stops.
// With -hook-only it asks the hook the same way but runs COMMAND itself,
// bare: the hook's share of the path.
//
//	hostrun -command 'echo hi | wc -c'
//	hostrun -warden bin/warden -home H -session S -command 'echo hi | wc -c'
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	warden := flag.String("warden", "", "warden binary; empty runs the command bare")
	home := flag.String("home", "", "warden home")
	session := flag.String("session", "bench", "the host's session id")
	command := flag.String("command", "", "the shell command the agent asks for")
	hookOnly := flag.Bool("hook-only", false, "ask the hook, then run the command bare")
	flag.Parse()
	if *command == "" {
		fmt.Fprintln(os.Stderr, "usage: hostrun [-warden BIN -home H [-session S] [-hook-only]] -command CMD")
		os.Exit(2)
	}
	cmd := *command
	if *warden != "" {
		rewritten, err := rewrite(*warden, *home, *session, cmd)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostrun:", err)
			os.Exit(1)
		}
		if !*hookOnly {
			cmd = rewritten
		}
	}
	c := exec.Command("bash", "-c", cmd)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		var x *exec.ExitError
		if errors.As(err, &x) {
			os.Exit(x.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "hostrun:", err)
		os.Exit(1)
	}
}

// rewrite asks the hook about cmd and returns the command it says to run.
func rewrite(warden, home, session, cmd string) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/tmp/hostrun.jsonl", "cwd": cwd,
		"hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]string{"command": cmd, "description": "bench"},
	})
	if err != nil {
		return "", err
	}
	// The hook command as `warden install` writes it: started by
	// warden-exec when it sits beside warden.
	h := exec.Command(warden, "hook", "claude", "--home", home)
	if client := filepath.Join(filepath.Dir(warden), "warden-exec"); isExecutable(client) {
		h = exec.Command(client, warden, "hook", "claude", "--home", home)
	}
	h.Stdin = bytes.NewReader(payload)
	h.Stderr = os.Stderr
	out, err := h.Output()
	if err != nil {
		return "", fmt.Errorf("warden hook claude: %w", err)
	}
	var ans struct {
		HookSpecificOutput struct {
			PermissionDecision string `json:"permissionDecision"`
			UpdatedInput       struct {
				Command string `json:"command"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		return "", fmt.Errorf("hook answer %q: %w", out, err)
	}
	o := ans.HookSpecificOutput
	if o.PermissionDecision != "allow" || o.UpdatedInput.Command == "" {
		return "", fmt.Errorf("hook did not allow a rewritten command: %s", out)
	}
	return o.UpdatedInput.Command, nil
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
