package hook

import (
	"context"
	"encoding/json"
	"testing"
)

// tmpDecider is a fakeDecider whose sessions have a /tmp on the host.
type tmpDecider struct {
	fakeDecider
	tmp string
}

func (d *tmpDecider) SessionTmp(_ context.Context, session string) (string, error) {
	return d.tmp + "/" + session, nil
}

// TestHostFileToolsFindTheSessionsTmp: a host file tool's path in /tmp (or
// /var/tmp) is the same path in the session's /tmp, where its commands
// wrote: the gate judges that path, and the host is told to run the tool
// with it, whether the call is allowed or asked about; a path that only
// looks as if it were in /tmp, and a project in /tmp, are left as they are.
func TestHostFileToolsFindTheSessionsTmp(t *testing.T) {
	const host = "/home/u/.warden/sessions"
	pre := func(cwd, tool, input string) string {
		return `{"session_id":"s1","cwd":"` + cwd + `","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"t1"}`
	}
	cases := []struct {
		name, verdict, payload string
		resource               string // what the gate judged
		updated                map[string]string
	}{
		{"read a log", "allow", pre("/p", "Read", `{"file_path":"/tmp/test.log","limit":40}`),
			host + "/s1/test.log", map[string]string{"file_path": host + "/s1/test.log"}},
		{"write a script, asked", "ask", pre("/p", "Write", `{"file_path":"/var/tmp/x/run.py","content":"print(1)"}`),
			host + "/s1/x/run.py", map[string]string{"file_path": host + "/s1/x/run.py", "content": "print(1)"}},
		{"grep the root", "allow", pre("/p", "Grep", `{"pattern":"FAIL","path":"/tmp"}`),
			host + "/s1", map[string]string{"path": host + "/s1", "pattern": "FAIL"}},
		{"glob a pattern", "allow", pre("/p", "Glob", `{"pattern":"/tmp/build-*/*.log"}`),
			host + "/s1/build-*/*.log", map[string]string{"pattern": host + "/s1/build-*/*.log"}},
		{"climbing out", "allow", pre("/p", "Read", `{"file_path":"/tmp/../etc/hosts"}`), "/tmp/../etc/hosts", nil},
		{"a name that only starts alike", "allow", pre("/p", "Read", `{"file_path":"/tmpfiles/a"}`), "/tmpfiles/a", nil},
		{"a project in /tmp", "allow", pre("/tmp/proj", "Read", `{"file_path":"/tmp/proj/a.go"}`), "/tmp/proj/a.go", nil},
		{"refused", "deny", pre("/p", "Read", `{"file_path":"/tmp/secret"}`), host + "/s1/secret", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &tmpDecider{fakeDecider: fakeDecider{verdict: c.verdict}, tmp: host}
			status, stdout, stderr := run("claude", []byte(c.payload), d)
			if status != 0 || len(d.reqs) != 1 {
				t.Fatalf("status %d, %d requests, stderr %s", status, len(d.reqs), stderr)
			}
			if got := d.reqs[0].Resource; got != c.resource {
				t.Errorf("the gate judged %q; want %q", got, c.resource)
			}
			var out struct {
				Specific struct {
					UpdatedInput map[string]any `json:"updatedInput"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("answer %s: %v", stdout, err)
			}
			got := out.Specific.UpdatedInput
			if c.updated == nil {
				if got != nil {
					t.Errorf("the host was told to run it with %v; want its own input", got)
				}
				return
			}
			for k, v := range c.updated {
				if got[k] != v {
					t.Errorf("updatedInput.%s = %v; want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}
