package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const hashA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestApprovalsSection(t *testing.T) {
	d := mustParse(t, "version: 1\n").Policy.Approvals
	if d.Timeout != 5*time.Minute || len(d.Always) != 0 || d.Telegram.ChatID != 0 || d.Webhook.URL != "" || d.TCP != "" {
		t.Fatalf("defaults = %+v", d)
	}
	l := mustParse(t, `version: 1
approvals:
  timeout: 90s
  always:
    - {input_hash: `+hashA+`, capability: shell, action: exec, resource: make deploy, approved_by: console:op, approval: a1}
  telegram: {token_env: TG_TOKEN, chat_id: -100123, allowed_users: [42]}
  webhook: {url: "https://hooks.example.com/w", secret_env: HOOK_SECRET}
  daemon: {tcp: "127.0.0.1:4751"}
`)
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	a := l.Policy.Approvals
	if a.Timeout != 90*time.Second || !strings.Contains(a.Always[hashA], "make deploy") || a.Telegram.ChatID != -100123 ||
		a.Telegram.AllowedUsers[0] != 42 || a.Webhook.SecretEnv != "HOOK_SECRET" || a.TCP != "127.0.0.1:4751" {
		t.Fatalf("approvals = %+v", a)
	}
}

func TestApprovalsSectionProblems(t *testing.T) {
	for _, c := range []struct{ yaml, key, msg string }{
		{"timeout: soon", "approvals.timeout", "not a duration"},
		{"timeout: 0s", "approvals.timeout", "between 1s and 24h"},
		{"always: [{input_hash: md5:abc}]", "approvals.always[0].input_hash", "64 lower-case hex"},
		{"telegram: {token_env: TG, chat_id: 1}", "approvals.telegram.allowed_users", "nobody could answer"},
		{"telegram: {token_env: '123:secret-token', chat_id: 1, allowed_users: [1]}", "approvals.telegram.token_env", "never goes in this file"},
		{"webhook: {url: 'ftp://x', secret_env: S}", "approvals.webhook.url", "http or https"},
		{"daemon: {tcp: 'everywhere'}", "approvals.daemon.tcp", "HOST:PORT"},
		{"daemon: {socket: 'rel/sock'}", "approvals.daemon.socket", "absolute"},
	} {
		l := mustParse(t, "version: 1\napprovals:\n  "+c.yaml+"\n")
		found := false
		for _, p := range l.Problems {
			if p.Key == c.key && strings.Contains(p.Error(), c.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %v; want %s: …%s…", c.yaml, l.Problems, c.key, c.msg)
		}
		if len(l.Policy.Approvals.Always) != 0 {
			t.Errorf("%s: an invalid section kept always rules %v", c.yaml, l.Policy.Approvals.Always)
		}
	}
}

func TestAddAlwaysKeepsTheFileAndItsComments(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, DefaultFile(), FileMode); err != nil {
		t.Fatal(err)
	}
	r := AlwaysRule{InputHash: hashA, Capability: "shell", Action: "exec", Resource: "make deploy", ApprovedBy: "console:op", Approval: "a1", Added: time.Now()}
	for range 2 { // the second add of the same input is a no-op
		if err := AddAlways(path, r); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(path)
	if err != nil || len(l.Problems) != 0 {
		t.Fatalf("Load after AddAlways: %v %v", err, l.Problems)
	}
	if len(l.Policy.Approvals.Always) != 1 || !strings.Contains(l.Policy.Approvals.Always[hashA], "console:op") {
		t.Errorf("always rules = %v", l.Policy.Approvals.Always)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "# How long an ask waits") || strings.Count(string(data), hashA) != 1 {
		t.Errorf("the file lost its comments or holds the rule %d times:\n%s", strings.Count(string(data), hashA), data)
	}
	if err := AddAlways(path, AlwaysRule{InputHash: "nope"}); err == nil {
		t.Error("AddAlways accepted a malformed input hash")
	}
}
