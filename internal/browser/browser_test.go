package browser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// fakeBinary writes an executable file called name into dir and returns its path.
func fakeBinary(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFind(t *testing.T) {
	full := t.TempDir()
	for _, n := range names {
		fakeBinary(t, full, n)
	}
	second := t.TempDir()
	fakeBinary(t, second, "chromium-browser")
	fakeBinary(t, second, "google-chrome")
	empty := t.TempDir()
	fb := fakeBinary(t, t.TempDir(), "chromium")
	env := fakeBinary(t, t.TempDir(), "my-chrome")

	tests := []struct {
		name     string
		env      string // WARDEN_CHROMIUM
		path     string // PATH
		fallback string
		want     string
		wantErr  string
	}{
		{name: "env wins", env: env, path: full, fallback: fb, want: env},
		{name: "env missing file", env: filepath.Join(empty, "nope"), path: full, fallback: fb, wantErr: EnvChromium},
		{name: "first in PATH", path: full, fallback: fb, want: filepath.Join(full, "chromium")},
		{name: "later names", path: second, fallback: fb, want: filepath.Join(second, "chromium-browser")},
		{name: "fallback", path: empty, fallback: fb, want: fb},
		{name: "none", path: empty, fallback: filepath.Join(empty, "chromium"), wantErr: "no Chromium found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvChromium, tt.env)
			t.Setenv("PATH", tt.path)
			old := fallback
			fallback = tt.fallback
			t.Cleanup(func() { fallback = old })

			got, err := Find()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Find() = %q, %v, want an error mentioning %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Find() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestFindNoneIsErrNotFound(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(EnvChromium, "")
	t.Setenv("PATH", empty)
	old := fallback
	fallback = filepath.Join(empty, "chromium")
	t.Cleanup(func() { fallback = old })
	if _, err := Find(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Find() error = %v, want ErrNotFound", err)
	}
}

// stoppingTB records how New stopped the test instead of stopping it.
type stoppingTB struct {
	testing.TB
	skipped, failed string
}

func (s *stoppingTB) Helper()                        {}
func (s *stoppingTB) Skip(args ...any)               { s.skipped = fmt.Sprint(args...) }
func (s *stoppingTB) Fatalf(format string, a ...any) { s.failed = fmt.Sprintf(format, a...) }

func TestNewWithoutChromium(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(EnvChromium, "")
	t.Setenv("PATH", empty)
	old := fallback
	fallback = filepath.Join(empty, "chromium")
	t.Cleanup(func() { fallback = old })

	for _, tt := range []struct {
		ci                      string
		wantSkipped, wantFailed bool
	}{
		{ci: "", wantSkipped: true},
		{ci: "true", wantFailed: true},
	} {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			s := &stoppingTB{TB: t}
			if ctx := New(s); ctx != nil {
				t.Errorf("New returned a context with no Chromium")
			}
			if (s.skipped != "") != tt.wantSkipped || (s.failed != "") != tt.wantFailed {
				t.Fatalf("New: skipped %q, failed %q; want skipped %v, failed %v", s.skipped, s.failed, tt.wantSkipped, tt.wantFailed)
			}
			if msg := s.skipped + s.failed; !strings.Contains(msg, "no Chromium found (install the Debian package chromium, or set WARDEN_CHROMIUM)") {
				t.Errorf("New says %q, want the reason and the remedy", msg)
			}
		})
	}
}

func TestNew(t *testing.T) {
	ctx := New(t)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1 + 2`))
	if err != nil || got != 3 {
		t.Fatalf("Evaluate(1 + 2) = %d, %v, want 3", got, err)
	}
}
