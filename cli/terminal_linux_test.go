package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentwarden/warden"
)

// openPTY returns the controller and the terminal side of a new pseudo-terminal.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	// Non-blocking, so the runtime polls it and read deadlines work.
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here (%v); CI runs on Linux with /dev/ptmx", err)
	}
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pts: %v", err)
	}
	return ptm, pts
}

// terminal is a warden command running on a fresh pseudo-terminal, as its
// controlling terminal, with what the terminal has shown so far.
type terminal struct {
	t    *testing.T
	ptm  *os.File
	cmd  *exec.Cmd
	seen bytes.Buffer
}

// atTerminal starts cmd on a new pseudo-terminal.
func atTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	ptm, pts := openPTY(t)
	t.Cleanup(func() { ptm.Close() })
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	t.Cleanup(func() { cmd.Process.Kill() })
	return &terminal{t: t, ptm: ptm, cmd: cmd}
}

// expect reads the terminal until what it showed after the first from bytes
// contains want, and returns the offset just past it.
func (tm *terminal) expect(from int, want string) int {
	tm.t.Helper()
	buf := make([]byte, 512)
	if err := tm.ptm.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		tm.t.Fatalf("set a deadline on the terminal: %v", err)
	}
	defer tm.ptm.SetReadDeadline(time.Time{})
	for {
		if i := strings.Index(tm.seen.String()[from:], want); i >= 0 {
			return from + i + len(want)
		}
		n, err := tm.ptm.Read(buf)
		tm.seen.Write(buf[:n])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			tm.cmd.Process.Kill()
			tm.t.Fatalf("the terminal never showed %q; it showed %q", want, tm.seen.String()[from:])
		}
		if err != nil {
			tm.t.Fatalf("read terminal: %v (waiting for %q; saw %q)", err, want, tm.seen.String()[from:])
		}
	}
}

// send types line and Enter.
func (tm *terminal) send(line string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.ptm, line+"\n"); err != nil {
		tm.t.Fatal(err)
	}
}

// wait waits for the command to end and returns everything the terminal
// showed. It reads the terminal while it waits: a command that writes more
// than the terminal buffers (a spinner on a slow machine) would otherwise
// block on its write and never end.
func (tm *terminal) wait() (string, error) {
	rest := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(tm.ptm) // EIO once the child is gone
		rest <- b
	}()
	err := tm.cmd.Wait()
	tm.seen.Write(<-rest)
	return tm.seen.String(), err
}

// unkillAtTerminal runs `warden unkill` on a fresh terminal, answers the
// prompt with answer, and returns what the terminal showed.
func unkillAtTerminal(t *testing.T, home, answer string) (string, error) {
	t.Helper()
	tm := atTerminal(t, wardenCmd(home, "unkill"))
	tm.expect(0, "Type 'unkill' to confirm")
	tm.send(answer)
	return tm.wait()
}

func TestUnkillAtATerminal(t *testing.T) {
	home := initHome(t)
	if out, err := wardenCmd(home, "kill").CombinedOutput(); err != nil {
		t.Fatalf("kill: %v\n%s", err, out)
	}
	// Whether the stop is on, by what it does: a tier 2 tool is refused by it.
	getKill := func() string {
		out, _ := wardenCmd(home, "check", "tool", "call", "analyze_market").Output()
		return strconv.FormatBool(strings.Contains(string(out), `"rule":"safety.kill_switch"`) && strings.Contains(string(out), `"verdict":"deny"`))
	}

	out, err := unkillAtTerminal(t, home, "yes")
	if err == nil || !strings.Contains(out, "not confirmed") || getKill() != "true" {
		t.Fatalf("a wrong answer: err %v, kill switch %s, terminal %q; want exit 2 and the stop still on", err, getKill(), out)
	}

	out, err = unkillAtTerminal(t, home, "unkill")
	if err != nil || !strings.Contains(out, "emergency stop is OFF") || getKill() != "false" {
		t.Fatalf("the right answer: err %v, kill switch %s, terminal %q; want the stop off", err, getKill(), out)
	}
	events, err := wardenCmd(home, "audit", "events", "--type", "kill_switch_off").Output()
	if err != nil || !strings.Contains(string(events), "kill_switch_off") {
		t.Fatalf("no kill_switch_off event: %v\n%s", err, events)
	}
	decisions, err := wardenCmd(home, "audit", "--tool", "unkill", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var asks int
	for _, line := range strings.Split(strings.TrimSpace(string(decisions)), "\n") {
		var e warden.AuditEntry
		if json.Unmarshal([]byte(line), &e) != nil || e.Verdict != warden.Ask || e.Tier != warden.TierManualOnly {
			t.Fatalf("unkill audit row %q: want a tier 4 ask", line)
		}
		asks++
	}
	if asks != 2 {
		t.Fatalf("%d unkill requests audited, want 2", asks)
	}
}

// TestApprovalsWatchAtATerminal answers two waiting requests as a person at
// a terminal would, with `warden approvals watch`: a tier 3 write approved
// after viewing its content, and a tier 4 transfer that refuses a session
// grant and is then denied. Each waiting `warden check --wait` ends with the
// answer given, and nothing the agent wrote reaches the terminal as a
// control sequence.
func TestApprovalsWatchAtATerminal(t *testing.T) {
	home := initHome(t)
	waiting := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := wardenCmd(home, append([]string{"check", "--wait", "tool", "call"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, &out
	}
	pending := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			out, err := wardenCmd(home, "approvals", "list").Output()
			if err != nil {
				t.Fatalf("approvals list: %v", err)
			}
			if strings.Count(string(out), " pending ") == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("want %d pending approvals; approvals list says\n%s", n, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// U+009B is a control sequence introducer to many terminals.
	write, writeOut := waiting("write_file", "--param", "path=notes\u009b2J.txt")
	pending(1) // the write first, so it is the oldest
	transfer, transferOut := waiting("transfer_token", "--param", "to=0xabc")
	pending(2)

	tm := atTerminal(t, wardenCmd(home, "approvals", "watch"))
	at := tm.expect(0, "resource: write_file")
	at = tm.expect(at, "[s] session  [v] view > ")
	tm.send("v")
	at = tm.expect(at, `"path": "notes␣2J.txt"`)
	at = tm.expect(at, "[v] view > ")
	if _, err := tm.ptm.Write([]byte("y")); err != nil { // one key, no Enter
		t.Fatal(err)
	}
	at = tm.expect(at, ": approved")

	at = tm.expect(at, "resource: transfer_token")
	at = tm.expect(at, "(tier 4: once only) > ")
	tm.send("s") // a standing grant for tier 4: refused, and asked again
	at = tm.expect(at, "warden: ")
	at = tm.expect(at, "(tier 4: once only) > ")
	tm.send("n")
	tm.expect(at, ": denied")

	if _, err := tm.ptm.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	shown, err := tm.wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Errorf("approvals watch after Ctrl-C: %v; want it ended by SIGINT", err)
	}
	if strings.ContainsRune(shown, '\u009b') {
		t.Errorf("the terminal was sent U+009B from the agent's request:\n%q", shown)
	}

	for _, w := range []struct {
		name    string
		cmd     *exec.Cmd
		out     *bytes.Buffer
		verdict warden.Verdict
	}{
		{"write_file", write, writeOut, warden.Allow},
		{"transfer_token", transfer, transferOut, warden.Deny},
	} {
		w.cmd.Wait()
		var d warden.Decision
		if err := json.Unmarshal(w.out.Bytes(), &d); err != nil || d.Verdict != w.verdict {
			t.Errorf("the waiting check of %s printed %q (%v); want verdict %s", w.name, w.out, err, w.verdict)
		}
	}
}
