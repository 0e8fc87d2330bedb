package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// seedFiles returns the default file and every testdata/load file.
func seedFiles(f *testing.F) [][]byte {
	files := [][]byte{DefaultFile()}
	paths, _ := filepath.Glob("testdata/load/*.yaml")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, data)
	}
	return files
}

// FuzzParse: Parse never panics, and returns either a *warden.Error and no
// policy, or a policy holding only valid values whose keys List and Get agree
// on, which the policy cache keeps exactly, and which survives being
// re-encoded the way Set writes files.
func FuzzParse(f *testing.F) {
	for _, data := range seedFiles(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, doc, err := parse(data)
		if err != nil {
			var we *warden.Error
			if l != nil || !errors.As(err, &we) || we.Message == "" {
				t.Fatalf("parse error = %#v with policy %v", err, l)
			}
			return
		}
		checkPolicy(t, l.Policy)
		checkCacheRoundTrip(t, l)
		for _, p := range l.Problems {
			if p.Message == "" || (p.Section != "" && sectionIndex(p.Section) < 0) {
				t.Fatalf("bad problem %#v", p)
			}
		}
		for _, kv := range l.List() {
			got, err := l.Get(kv.Key)
			if err != nil || !reflect.DeepEqual(got, kv.Value) {
				t.Fatalf("Get(%q) = %v, %v; List says %v", kv.Key, got, err, kv.Value)
			}
		}
		out, err := encodeDocument(doc)
		if err != nil {
			return // Set refuses to write what it cannot encode
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again.Policy, l.Policy) {
			t.Fatalf("re-encoding changed the policy:\n%+v\n%+v\n%s", l.Policy, again.Policy, out)
		}
	})
}

// FuzzSet: Set never panics; a refused Set leaves the file as it was; a Set
// that succeeds writes a file that parses, and changes nothing outside the
// key's section.
func FuzzSet(f *testing.F) {
	files := seedFiles(f)
	seeds := [][2]string{
		{"safety.killSwitchActive", "true"},
		{"safety.dailySpendCap", "-5"},
		{"safety.dailySpendCapp", "5"},
		{"safety.blockedTokens", `["SQUID","FOO"]`},
		{"tools.tiers.my_tool", "2"},
		{"tools.tiers", `{"a":1}`},
		{"tools.tiers.unkill", "1"},
		{"tools.overrides", `[{"tool":"transfer_token","recipients":["0xabc"],"tier":3}]`},
		{"tools.overrides", `[{"tool":"transfer_token","recipients":[],"tier":3}]`},
		{"safety", `{"dailySpendCap": 1}`},
		{"tools.tiers.a.b", "# c\n4"},
		{"version", "1"},
		{"slippage.maxLeverage", "150"},
		{"exposure.maxTotalExposureUsd", "-1"},
		{"trade.backend", "http"},
		{"trade.http.tokenEnv", "ghp_notAName"},
		{"trade.recipients", `["0x52908400098527886E0F7030069857D2E4169EE7"]`},
		{"stopLoss.defaultRule", `{"type":"trailing","threshold_pct":0.1}`},
		{"stopLoss.defaultRule.threshold_pct", "1.5"},
		{"signing.maxValueEth", "0.1234567890123456789"},
		{"signing.chainIds", "[]"},
		{"signing.passphraseEnv", "correct horse"},
	}
	for i, s := range seeds {
		f.Add(uint8(i), s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, which uint8, key, value string) {
		data := files[int(which)%len(files)]
		before, err := Parse(data)
		p := filepath.Join(t.TempDir(), FileName)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		serr := Set(p, key, value)
		got, rerr := os.ReadFile(p)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if serr != nil {
			var we *warden.Error
			if !errors.As(serr, &we) {
				t.Fatalf("Set error %v is not a *warden.Error", serr)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("refused Set(%q, %q) changed the file", key, value)
			}
			return
		}
		if err != nil {
			t.Fatalf("Set succeeded on a file that does not parse: %v", err)
		}
		after, err := Parse(got)
		if err != nil {
			t.Fatalf("Set(%q, %q) wrote a file that does not parse: %v\n%s", key, value, err, got)
		}
		checkPolicy(t, after.Policy)
		sec, _, _ := strings.Cut(key, ".")
		b, a := otherSections(before, sec), otherSections(after, sec)
		if !reflect.DeepEqual(b, a) {
			t.Fatalf("Set(%q, %q) changed other sections:\n%v\n%v\n%s", key, value, b, a, got)
		}
	})
}

// otherSections lists l's keys outside section sec.
func otherSections(l *Loaded, sec string) []KV {
	var out []KV
	for _, kv := range l.List() {
		if !strings.HasPrefix(kv.Key, sec+".") {
			out = append(out, kv)
		}
	}
	return out
}
