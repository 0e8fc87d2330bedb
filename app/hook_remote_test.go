package app_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/audit/feed"
)

// claudeStatusPayload is a Bash call the shell guard allows.
const claudeStatusPayload = `{"session_id":"s-remote","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status --short"},"tool_use_id":"toolu_remote"}`

// TestRemoteHookFindsTheDaemon: a hook through the daemon reaches it at the
// home's own socket, and at the socket the policy names when the daemon
// listens elsewhere; in both cases the daemon decides (its feed shows the
// decision).
func TestRemoteHookFindsTheDaemon(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "d.sock")
	for name, settings := range map[string][]string{
		"home socket":      nil,
		"socket in policy": {"approvals.daemon.socket", elsewhere},
	} {
		t.Run(name, func(t *testing.T) {
			dm := startDaemon(t, settings...)
			if settings != nil && dm.socket != elsewhere {
				t.Fatalf("daemon listens on %s, want %s", dm.socket, elsewhere)
			}
			code, msg := runHook(dm, true, "claude", claudeStatusPayload)
			if code != 0 || !strings.Contains(msg, `"permissionDecision":"allow"`) {
				t.Fatalf("hook = %d %s; want an allow", code, msg)
			}
			items := dm.d.Feed.List(feed.Filter{})
			if len(items) == 0 || !strings.Contains(items[len(items)-1].Summary, "git status") {
				t.Fatalf("daemon feed = %+v; want the hook's decision", items)
			}
		})
	}
}

// TestRemoteHookWithoutDaemonDecidesHere: when no daemon answers, the
// request never left the process, so the hook decides it in-process and the
// decision is audited in the home's database.
func TestRemoteHookWithoutDaemonDecidesHere(t *testing.T) {
	home := app.Home(filepath.Join(t.TempDir(), "h"))
	if _, err := app.Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	code := app.RunHookRemote(ctx, home, "claude", strings.NewReader(claudeStatusPayload), &out, &errw)
	if code != 0 || !strings.Contains(out.String(), `"permissionDecision":"allow"`) {
		t.Fatalf("hook = %d %s %s; want an allow decided here", code, out.String(), errw.String())
	}
	s, err := app.OpenStore(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.Entries(ctx, warden.AuditFilter{Capability: warden.CapShell})
	if err != nil || len(es) != 1 || es[0].Verdict != warden.Allow {
		t.Fatalf("audit = %+v, %v; want the one allow", es, err)
	}
}
