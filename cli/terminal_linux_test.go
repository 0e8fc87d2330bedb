package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
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

// unkillAtTerminal runs `warden unkill` on a fresh terminal, answers the
// prompt with answer, and returns what the terminal showed.
func unkillAtTerminal(t *testing.T, home, answer string) (string, error) {
	t.Helper()
	ptm, pts := openPTY(t)
	defer ptm.Close()
	cmd := wardenCmd(home, "unkill")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	var seen bytes.Buffer
	buf := make([]byte, 512)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(seen.String(), "Type 'unkill' to confirm") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no prompt on the terminal; saw %q", seen.String())
		}
		n, err := ptm.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("read terminal: %v (saw %q)", err, seen.String())
		}
	}
	io.WriteString(ptm, answer+"\n")
	err := cmd.Wait()
	rest, _ := io.ReadAll(ptm) // EIO once the child is gone
	seen.Write(rest)
	return seen.String(), err
}

func TestUnkillAtATerminal(t *testing.T) {
	home := initHome(t)
	if out, err := wardenCmd(home, "kill").CombinedOutput(); err != nil {
		t.Fatalf("kill: %v\n%s", err, out)
	}
	getKill := func() string {
		out, err := wardenCmd(home, "config", "get", "safety.killSwitchActive").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
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
