package telegram

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

func TestParsePress(t *testing.T) {
	tests := []struct {
		data string
		want press
		ok   bool
	}{
		{"a:" + approvalID + ":once", press{ID: approvalID, Answer: warden.AnswerOnce}, true},
		{"a:" + approvalID + ":deny", press{ID: approvalID, Answer: warden.AnswerDeny}, true},
		{"a:" + approvalID + ":session", press{ID: approvalID, Answer: warden.AnswerSession}, true},
		{"a:" + approvalID + ":always", press{ID: approvalID, Answer: warden.AnswerAlways}, true},
		{"a:" + approvalID + ":host", press{ID: approvalID, Answer: warden.AnswerHost}, true},
		{"a:" + approvalID + ":HOST", press{}, false},
		{"v:" + approvalID, press{ID: approvalID, View: true}, true},
		{"", press{}, false},
		{"a:", press{}, false},
		{"a:" + approvalID, press{}, false},
		{"a:" + approvalID + ":approve", press{}, false}, // only the names keyboard writes
		{"a:" + approvalID + ":ONCE", press{}, false},
		{"a::once", press{}, false},
		{"a:x:y:once", press{}, false},
		{"v:", press{}, false},
		{"v:a:b", press{}, false},
		{"v:" + strings.Repeat("x", 60), press{}, false},
		{"x:" + approvalID, press{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			got, err := parsePress(tt.data)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("parsePress(%q) = %+v, %v; want %+v, ok %v", tt.data, got, err, tt.want, tt.ok)
			}
		})
	}
}

// FuzzParsePress checks that parsePress never panics and takes only data
// that keyboard could have written: parse → data gives the input back, and
// it fits in a button.
func FuzzParsePress(f *testing.F) {
	for _, s := range []string{"a:" + approvalID + ":once", "v:" + approvalID, "a::", "a:x:always", "v:\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		p, err := parsePress(data)
		if err != nil {
			return
		}
		if got := p.data(); got != data {
			t.Errorf("parsePress(%q).data() = %q", data, got)
		}
		if len(data) > maxCallbackData {
			t.Errorf("parsePress took %d bytes of data, over %d", len(data), maxCallbackData)
		}
	})
}

func TestScrubText(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"raw", `Post "https://api.telegram.org/bot` + testToken + `/sendMessage": dial tcp: refused`},
		{"path escaped", "GET /bot" + url.PathEscape(testToken) + "/getMe"},
		{"query escaped", "token=" + url.QueryEscape(testToken)},
		{"secret alone", "secret " + testSecret + " leaked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scrubText(tt.in, testToken)
			if strings.Contains(got, testSecret) {
				t.Errorf("scrubText(%q) = %q, still holds the token", tt.in, got)
			}
			if !strings.Contains(got, tokenMask) {
				t.Errorf("scrubText(%q) = %q, want the mask in its place", tt.in, got)
			}
		})
	}
}

func TestScrubKeepsIs(t *testing.T) {
	sentinel := errors.New("forbidden")
	c := &Channel{token: testToken}
	err := c.scrub(fmt.Errorf("call %s: %w", testToken, sentinel))
	if !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(scrub(err), sentinel) = false, want true")
	}
	if errors.Unwrap(err) != nil {
		t.Errorf("scrub(err) unwraps to the unscrubbed error")
	}
	if strings.Contains(err.Error(), testSecret) {
		t.Errorf("scrub(err) = %q, still holds the token", err)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"😀😀", 3, "😀", true}, // each is two UTF-16 units
		{"😀😀", 4, "😀😀", false},
		{"é", 1, "é", false},
		{"a\xffb", 10, "a\uFFFDb", false},
		{"", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%d", tt.in, tt.max), func(t *testing.T) {
			got, cut := truncate(tt.in, tt.max)
			if got != tt.want || cut != tt.cut {
				t.Errorf("truncate(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.cut)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"rm -rf build", "rm -rf build"},
		{"ls\nOutcome: approved", `ls\nOutcome: approved`},
		{"a\r\nb\tc", `a\r\nb\tc`},
		{"evil\u202Etxt.exe", `evil\u202Etxt.exe`},
		{"x\u2028y\u2029z", `x\u2028y\u2029z`},
		{"bell\x07 esc\x1b[31m del\x7f", `bell\u0007 esc\u001B[31m del\u007F`},
		{"bad\xffbyte", "bad\uFFFDbyte"},
		{"café 😀 <b>*x*</b>", "café 😀 <b>*x*</b>"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := oneLine(tt.in); got != tt.want {
				t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got, want := escapeInvisible("{\n  \"a\": \"\u202E\"\n}", true), "{\n  \"a\": \"\\u202E\"\n}"; got != want {
		t.Errorf("escapeInvisible(keepNewlines) = %q, want %q", got, want)
	}
}

func TestFitMarksCut(t *testing.T) {
	got := fit(strings.Repeat("é", 300), maxAlert)
	if n := utf16Len(got); n != maxAlert {
		t.Errorf("fit is %d units long, want %d", n, maxAlert)
	}
	if !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("fit = %q, want valid text ending in …", got)
	}
}
