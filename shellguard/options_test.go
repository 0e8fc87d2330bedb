package shellguard

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden/shellguard/walk"
)

func words(s string) []walk.Word {
	var ws []walk.Word
	for _, f := range strings.Fields(s) {
		ws = append(ws, walk.Word{Value: f})
	}
	return ws
}

func TestParseArgs(t *testing.T) {
	g := compileGrammar("r,R,recursive f,force n,lines= color=? force-with-lease=? v,verbose")
	cases := []struct {
		args      string
		flags     string // sorted "name=value" pairs joined by spaces
		operands  string
		unknown   int
		ambiguous bool
	}{
		{args: "-rf x", flags: "force recursive", operands: "x"},
		{args: "-f -r x", flags: "force recursive", operands: "x"},
		{args: "--rec --fo x", flags: "recursive", operands: "x", ambiguous: true, unknown: 1},
		{args: "--rec --force x", flags: "force recursive", operands: "x"},
		{args: "-n5 a", flags: "lines=5", operands: "a"},
		{args: "-n 5 a", flags: "lines=5", operands: "a"},
		{args: "--lines=5 a", flags: "lines=5", operands: "a"},
		{args: "--color a", flags: "color", operands: "a"},
		{args: "-- -rf", operands: "-rf"},
		{args: "-x a", operands: "a", unknown: 1},
		{args: "-rn3 a", flags: "lines=3 recursive", operands: "a"},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			p := parseArgs(g, words(c.args), false)
			var fl []string
			for n, vs := range p.flags {
				for _, v := range vs {
					if v == "" {
						fl = append(fl, n)
					} else {
						fl = append(fl, n+"="+v)
					}
				}
			}
			sortStrings(fl)
			var ops []string
			for _, o := range p.operands {
				ops = append(ops, o.Value)
			}
			if got := strings.Join(fl, " "); got != c.flags {
				t.Errorf("parseArgs(%q) flags = %q, want %q", c.args, got, c.flags)
			}
			if got := strings.Join(ops, " "); got != c.operands {
				t.Errorf("parseArgs(%q) operands = %q, want %q", c.args, got, c.operands)
			}
			if len(p.unknown) != c.unknown || p.ambiguous != c.ambiguous {
				t.Errorf("parseArgs(%q) unknown %v ambiguous %v, want %d %v", c.args, p.unknown, p.ambiguous, c.unknown, c.ambiguous)
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestZones(t *testing.T) {
	z := zoner{cwd: "/home/user/project", ws: "/home/user/project", home: "/home/user", tmp: "/tmp"}
	cases := []struct {
		path string
		want Zone
	}{
		{"/", ZoneRoot},
		{"/etc/passwd", ZoneSystem},
		{"/var/tmp/x", ZoneTemp},
		{"/tmp", ZoneSystem},
		{"/tmp/x", ZoneTemp},
		{"/tmp/../home/user", ZoneHomeRoot},
		{"/dev/sda", ZoneDevice},
		{"/dev/null", ZoneNull},
		{"/dev/tcp/1.2.3.4/80", ZoneNetwork},
		{"~", ZoneHomeRoot},
		{"~/.ssh/id_rsa", ZoneHomeSensitive},
		{"~/.bashrc", ZoneHomeSensitive},
		{"~/.config/gcloud/x", ZoneHomeSensitive},
		{"~/Documents", ZoneHomeOther},
		{"/home/other", ZoneHomeRoot},
		{".", ZoneWorkspaceRoot},
		{".git", ZoneWorkspaceVCS},
		{".git/hooks/pre-commit", ZoneWorkspaceVCS},
		{".git/info/exclude", ZoneWorkspaceOther},
		{"sub/.git/info/exclude", ZoneWorkspaceOther},
		{".git/info/attributes", ZoneWorkspaceVCS},
		{".git/info/exclude/x", ZoneWorkspaceVCS},
		{".git/info", ZoneWorkspaceVCS},
		{".git/HEAD", ZoneWorkspaceVCS},
		{"node_modules", ZoneWorkspaceArtifact},
		{"web/node_modules/x", ZoneWorkspaceArtifact},
		{"node_modules_backup", ZoneWorkspaceOther},
		{"src/main.go", ZoneWorkspaceOther},
		{".env", ZoneHomeSensitive},
		{"config/.env.local", ZoneHomeSensitive},
		{".env.example", ZoneWorkspaceOther},
		{"/srv/data", ZoneSystem},
		{"/host/home", ZoneOutside},
	}
	for _, c := range cases {
		if got := z.path(c.path); got != c.want {
			t.Errorf("zone(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestDefaultTableComplete(t *testing.T) {
	tab := DefaultTable()
	for e := Effect(0); e < numEffects; e++ {
		for z := ZoneUnknown; z <= ZoneOutside; z++ {
			if _, ok := tab[e][z]; !ok {
				t.Errorf("table has no cell for %v × %v", e, z)
			}
		}
	}
}
