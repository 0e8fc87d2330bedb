package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestShellSection(t *testing.T) {
	l, err := Parse([]byte("version: 1\nshell:\n  allow_task_runners: false\n  safe: ['kubectl   get']\n  destructive: [terraform destroy]\n  replacements:\n    - {from: npm install, to: bun install}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	want := Shell{AllowTaskRunners: false, Safe: []string{"kubectl get"}, Suspicious: []string{}, Destructive: []string{"terraform destroy"},
		Replacements: []Replacement{{From: "npm install", To: "bun install"}}, Host: []string{}}
	if got := l.Policy.Shell; !reflect.DeepEqual(got, want) {
		t.Fatalf("Shell = %+v, want %+v", got, want)
	}
	if d := Default().Shell; !d.AllowTaskRunners || len(d.Safe) != 0 {
		t.Fatalf("default Shell = %+v, want task runners allowed and no extra patterns", d)
	}
	for name, bad := range map[string]string{
		"empty prefix":      "version: 1\nshell:\n  destructive: ['  ']\n",
		"replacement to ''": "version: 1\nshell:\n  replacements: [{from: npm install, to: ''}]\n",
		"unknown key":       "version: 1\nshell:\n  destructiv: [x]\n",
	} {
		l, err := Parse([]byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Problems) == 0 || !strings.Contains(l.Problems[0].Key, "shell") {
			t.Errorf("%s: problems %v, want one in the shell section", name, l.Problems)
		}
		if !reflect.DeepEqual(l.Policy.Shell, Default().Shell) {
			t.Errorf("%s: an invalid shell section did not fall back to its defaults", name)
		}
	}
}
