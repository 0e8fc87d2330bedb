package paper_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/paper"
)

// writePrices writes a prices file and sets its modification time.
func writePrices(t *testing.T, path, data string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestFilePrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	writePrices(t, path, `{"ETH": 3000, "btc": 60000}`, t0)
	fp := &paper.FilePrices{Path: path}
	price := func(asset string) finance.Price {
		t.Helper()
		p, err := fp.Price(ctx, asset, t0.Add(24*time.Hour))
		if err != nil {
			t.Fatalf("Price(%s): %v", asset, err)
		}
		return p
	}
	if p := price("ETH"); p.USD != 3000 || !p.At.Equal(t0) {
		t.Errorf("Price(ETH) = %+v; want 3000 dated at the file's modification time %v", p, t0)
	}
	if p := price("BTC"); p.USD != 60000 {
		t.Errorf("Price(BTC) = %+v; want 60000 (asset ids match in any case)", p)
	}

	t.Run("an unchanged modification time serves the prices read", func(t *testing.T) {
		writePrices(t, path, `{"ETH": 4000, "btc": 60000}`, t0) // same size, same time
		if p := price("ETH"); p.USD != 3000 {
			t.Errorf("Price(ETH) = %v; want the cached 3000", p.USD)
		}
	})
	t.Run("a changed file is read again", func(t *testing.T) {
		at := "2025-01-02T16:30:00Z"
		writePrices(t, path, `{"ETH": {"usd": 3100, "at": "`+at+`"}, "SOL": 150}`, t0.Add(time.Hour))
		if p := price("ETH"); p.USD != 3100 || p.At.Format(time.RFC3339) != at {
			t.Errorf("Price(ETH) = %+v; want 3100 at %s", p, at)
		}
		if p := price("SOL"); p.USD != 150 || !p.At.Equal(t0.Add(time.Hour)) {
			t.Errorf("Price(SOL) = %+v; want 150 at the new modification time", p)
		}
	})
	t.Run("an asset the file lacks", func(t *testing.T) {
		_, err := fp.Price(ctx, "BTC", t0)
		if !errors.Is(err, paper.ErrUnknownAsset) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "BTC") {
			t.Errorf("Price(BTC) error = %v; want ErrUnknownAsset naming the file and the asset", err)
		}
	})
	t.Run("a missing file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "none.json")
		if _, err := (&paper.FilePrices{Path: missing}).Price(ctx, "ETH", t0); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("Price from a missing file: %v; want an error naming it", err)
		}
	})
}

func TestFilePricesMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, data, mention string
	}{
		{"empty file", ``, "not JSON"},
		{"array", `[3000]`, "JSON object"},
		{"price as a string", `{"ETH": "3000"}`, `"ETH"`},
		{"null price", `{"ETH": null}`, `"ETH"`},
		{"negative price", `{"ETH": -1}`, `"ETH"`},
		{"zero price", `{"ETH": 0}`, `"ETH"`},
		{"huge price", `{"ETH": 1e999}`, `"ETH"`},
		{"unknown key in an entry", `{"ETH": {"usd": 3000, "when": "now"}}`, `"ETH"`},
		{"entry without usd", `{"ETH": {"at": "2025-01-02T15:00:00Z"}}`, `no "usd"`},
		{"malformed time", `{"ETH": {"usd": 3000, "at": "yesterday"}}`, "RFC 3339"},
		{"duplicate asset", `{"ETH": 3000, "eth": 3100}`, "twice"},
		{"empty asset id", `{"": 1}`, "empty asset"},
		{"trailing data", `{"ETH": 3000} {}`, "after the closing brace"},
		{"unterminated", `{"ETH": 3000`, "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prices.json")
			writePrices(t, path, tc.data, t0)
			_, err := (&paper.FilePrices{Path: path}).Price(ctx, "ETH", t0)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("Price from %s = %v; want an error naming the file and %s", tc.data, err, tc.mention)
			}
		})
	}
}

func TestPathPricesDeterministic(t *testing.T) {
	mk := func(seed int64, start map[string]float64) *paper.PathPrices {
		return &paper.PathPrices{Seed: seed, Start: start, Step: time.Minute, Volatility: 0.01, Epoch: t0}
	}
	at := func(n int) time.Time { return t0.Add(time.Duration(n)*time.Minute + 30*time.Second) }
	path := func(p *paper.PathPrices, asset string, ticks []int) []float64 {
		t.Helper()
		var out []float64
		for _, n := range ticks {
			pr, err := p.Price(ctx, asset, at(n))
			if err != nil {
				t.Fatal(err)
			}
			if want := t0.Add(time.Duration(max(n, 0)) * time.Minute); !pr.At.Equal(want) {
				t.Errorf("Price at tick %d dated %v, want the tick's start %v", n, pr.At, want)
			}
			out = append(out, pr.USD)
		}
		return out
	}
	forward := []int{0, 1, 2, 5, 100, 1000}
	backward := []int{1000, 100, 5, 2, 1, 0}
	a := path(mk(7, nil), "ETH", forward)
	if a[0] != 3000 {
		t.Errorf("ETH at tick 0 = %v, want the default start 3000", a[0])
	}
	t.Run("same seed, same path, in any order", func(t *testing.T) {
		b := path(mk(7, nil), "ETH", backward)
		for i := range a {
			if a[i] != b[len(b)-1-i] {
				t.Fatalf("paths differ at tick %d: %v and %v", forward[i], a[i], b[len(b)-1-i])
			}
		}
	})
	t.Run("another seed, another path", func(t *testing.T) {
		if b := path(mk(8, nil), "ETH", forward); b[5] == a[5] {
			t.Errorf("seeds 7 and 8 both give %v at tick 1000", a[5])
		}
	})
	t.Run("the path moves", func(t *testing.T) {
		if a[1] == a[0] || a[5] == a[4] {
			t.Errorf("path %v does not move", a)
		}
	})
	t.Run("other assets do not change a path", func(t *testing.T) {
		start := paper.DefaultStartPrices()
		start["DOGE"] = 0.1
		if b := path(mk(7, start), "ETH", forward); b[5] != a[5] {
			t.Errorf("adding DOGE moved ETH at tick 1000 from %v to %v", a[5], b[5])
		}
	})
	t.Run("before the epoch is tick 0", func(t *testing.T) {
		p, err := mk(7, nil).Price(ctx, "ETH", t0.Add(-time.Hour))
		if err != nil || p.USD != 3000 || !p.At.Equal(t0) {
			t.Errorf("Price before the epoch = %+v, %v; want 3000 at the epoch", p, err)
		}
	})
	t.Run("zero volatility is flat", func(t *testing.T) {
		p := mk(7, nil)
		p.Volatility = 0
		if b := path(p, "SOL", forward); b[5] != 150 {
			t.Errorf("SOL with no volatility = %v, want 150", b)
		}
	})
	t.Run("unknown asset", func(t *testing.T) {
		if _, err := mk(7, nil).Price(ctx, "NOPE", t0); !errors.Is(err, paper.ErrUnknownAsset) {
			t.Errorf("Price(NOPE) error = %v; want ErrUnknownAsset", err)
		}
	})
	t.Run("no epoch", func(t *testing.T) {
		if _, err := (&paper.PathPrices{}).Price(ctx, "ETH", t0); err == nil {
			t.Error("a path without an epoch priced ETH")
		}
	})
}

func TestPathPricesScripted(t *testing.T) {
	p := &paper.PathPrices{Epoch: t0, Step: time.Hour, Ticks: map[string][]float64{"ETH": {3000, 3300, 2700}, "BAD": {}}}
	for _, tc := range []struct {
		name string
		at   time.Time
		want float64
		tick int
	}{
		{"tick 0", t0, 3000, 0},
		{"inside tick 1", t0.Add(90 * time.Minute), 3300, 1},
		{"tick 2", t0.Add(2 * time.Hour), 2700, 2},
		{"held after the end", t0.Add(50 * time.Hour), 2700, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Price(ctx, "eth", tc.at)
			if err != nil || got.USD != tc.want || !got.At.Equal(t0.Add(time.Duration(tc.tick)*time.Hour)) {
				t.Errorf("Price(eth, %v) = %+v, %v; want %v at the start of tick %d", tc.at, got, err, tc.want, tc.tick)
			}
		})
	}
	if _, err := p.Price(ctx, "BAD", t0); err == nil {
		t.Error("an empty scripted path priced BAD")
	}
}
