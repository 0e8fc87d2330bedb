// Package browser finds and drives a headless Chromium for the web console's tests.
//
// New starts one browser for a test and returns its chromedp context; each
// chromedp.NewContext made from it is a new tab with its own sessionStorage:
//
//	ctx := browser.New(t) // skips the test when there is no Chromium
//	tab, cancel := chromedp.NewContext(ctx)
//	defer cancel()
//	err := chromedp.Do(tab, chromedp.Navigate(url))
//
// Without a Chromium the test is skipped with the reason, except when the
// environment variable CI is set: there it fails, so that CI never passes
// without running the browser tests.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvChromium is the environment variable that names the Chromium (or
// Chrome) binary to use, as a path or a name looked up in PATH.
const EnvChromium = "WARDEN_CHROMIUM"

// Timeout bounds the life of the browser that New starts: every action of the
// test must be done by then.
const Timeout = 60 * time.Second

// names are the binaries Find looks for in PATH, in order; fallback is tried
// last, for a PATH that leaves out /usr/bin.
var (
	names    = []string{"chromium", "chromium-browser", "google-chrome"}
	fallback = "/usr/bin/chromium"
)

// ErrNotFound is Find's error when there is no Chromium to run.
var ErrNotFound = errors.New("no Chromium found (install the Debian package chromium, or set " + EnvChromium + "); the console's browser tests need it")

// Find returns the path of the Chromium to run: $WARDEN_CHROMIUM when set,
// else the first of chromium, chromium-browser and google-chrome in PATH,
// else /usr/bin/chromium. When WARDEN_CHROMIUM is set but names no executable
// file, Find fails rather than fall back to another browser; with nothing
// found it returns ErrNotFound.
func Find() (path string, err error) {
	if p := os.Getenv(EnvChromium); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s is not an executable Chromium: %w", EnvChromium, p, err)
		}
		return path, nil
	}
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	if path, err := exec.LookPath(fallback); err == nil {
		return path, nil
	}
	return "", ErrNotFound
}

// New starts a headless Chromium for t and returns its chromedp context; the
// browser stops at t's cleanup, or after Timeout. Without a Chromium, New
// skips t, or fails it when the environment variable CI is not empty.
//
// The browser runs headless with the GPU off, in a temporary profile
// directory that chromedp makes and removes, and without Chromium's sandbox
// when the test runs as root (Chromium refuses to start as root otherwise).
func New(t testing.TB) context.Context {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI is set, so the browser tests may not be skipped", err)
		} else {
			t.Skip(err.Error())
		}
		return nil // not reached with a real testing.TB
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.DisableGPU,
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	base, cancelBase := context.WithTimeout(context.Background(), Timeout)
	alloc, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	stop := func() {
		// Cancel closes the browser gracefully and waits for it; the
		// cancel funcs then free what is left and wait for the profile
		// directory to be removed.
		if err := chromedp.Cancel(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			t.Logf("stop Chromium: %v", err)
		}
		cancelCtx()
		cancelAlloc()
		cancelBase()
	}

	// The first Do starts the browser and binds it to ctx, which has no
	// deadline of its own but Timeout's.
	if err := chromedp.Do(ctx); err != nil {
		stop()
		t.Fatalf("start Chromium %s: %v", path, err)
	}
	t.Cleanup(stop)
	return ctx
}
