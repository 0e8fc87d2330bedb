package paper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/internal/clip"
)

// FilePrices reads prices from a JSON file that maps asset ids to USD
// prices, either plainly or with the moment each was observed:
//
//	{"ETH": 3000, "BTC": 60000}
//	{"ETH": {"usd": 3000, "at": "2025-01-02T15:04:05Z"}}
//
// Asset ids are matched case-insensitively. A price without "at" is dated
// at the file's modification time, so a file nobody updates makes its
// prices stale. The file is re-read whenever its modification time or size
// changes; the at argument of Price is ignored (the file says what the
// price is now).
//
// Decoding is strict: an unknown key in an entry, a duplicate asset, a price
// that is not a positive finite number, a malformed "at" or trailing data
// is an error naming the file and the asset, and so is an asset the file
// does not list (wrapping ErrUnknownAsset).
//
// Path is required. Use a *FilePrices, safe for concurrent use; it must not
// be copied after first use.
type FilePrices struct {
	Path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	prices  map[string]finance.Price // nil until the file was read
}

var _ PriceSource = (*FilePrices)(nil)

// Price returns the file's price of assetID.
func (f *FilePrices) Price(ctx context.Context, assetID string, _ time.Time) (finance.Price, error) {
	if err := ctx.Err(); err != nil {
		return finance.Price{}, err
	}
	prices, err := f.load()
	if err != nil {
		return finance.Price{}, err
	}
	p, ok := prices[strings.ToUpper(assetID)]
	if !ok {
		return finance.Price{}, fmt.Errorf("prices file %s: asset %q: %w", f.Path, assetID, ErrUnknownAsset)
	}
	return p, nil
}

// load returns the file's prices, reading it again if it changed.
func (f *FilePrices) load() (map[string]finance.Price, error) {
	if f.Path == "" {
		return nil, errors.New("prices file: no path configured")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, err := os.Stat(f.Path)
	if err != nil {
		return nil, fmt.Errorf("prices file %s: %w", f.Path, err)
	}
	if f.prices != nil && fi.ModTime().Equal(f.modTime) && fi.Size() == f.size {
		return f.prices, nil
	}
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, fmt.Errorf("prices file %s: %w", f.Path, err)
	}
	prices, err := parsePrices(data, fi.ModTime())
	if err != nil {
		return nil, fmt.Errorf("prices file %s: %w", f.Path, err)
	}
	f.prices, f.modTime, f.size = prices, fi.ModTime(), fi.Size()
	return prices, nil
}

// priceEntry is the long form of one asset's price.
type priceEntry struct {
	USD *float64 `json:"usd"`
	At  string   `json:"at"`
}

// parsePrices decodes a prices file; modTime dates the entries without "at".
func parsePrices(data []byte, modTime time.Time) (map[string]finance.Price, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	} else if tok != json.Delim('{') {
		return nil, errors.New(`want a JSON object such as {"ETH": 3000}`)
	}
	prices := map[string]finance.Price{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		key, ok := tok.(string) // inside an object, the decoder returns each key as a string
		if !ok {
			return nil, fmt.Errorf("unexpected %v where an asset id belongs", tok)
		}
		asset := strings.ToUpper(strings.TrimSpace(key))
		if asset == "" {
			return nil, errors.New("an entry has an empty asset id")
		}
		if _, dup := prices[asset]; dup {
			return nil, fmt.Errorf("asset %q: listed twice", asset)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("asset %q: %w", asset, err)
		}
		p, err := parseEntry(raw, modTime)
		if err != nil {
			return nil, fmt.Errorf("asset %q: %w", asset, err)
		}
		prices[asset] = p
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the closing brace")
	}
	return prices, nil
}

func parseEntry(raw json.RawMessage, modTime time.Time) (finance.Price, error) {
	p := finance.Price{At: modTime}
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var e priceEntry
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return p, fmt.Errorf(`want {"usd": <price>, "at": "<RFC 3339 time>"}: %w`, err)
		}
		if e.USD == nil {
			return p, errors.New(`the entry has no "usd" price`)
		}
		p.USD = *e.USD
		if e.At != "" {
			at, err := time.Parse(time.RFC3339, e.At)
			if err != nil {
				return p, fmt.Errorf(`"at" is not an RFC 3339 time: %w`, err)
			}
			p.At = at
		}
	case len(raw) > 0 && (raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9'):
		if err := json.Unmarshal(raw, &p.USD); err != nil {
			return p, fmt.Errorf("the price %s is not a number: %w", raw, err)
		}
	default:
		return p, fmt.Errorf(`the price is %s; want a number or {"usd": <price>, "at": "<time>"}`, clip.String(string(raw), 40))
	}
	if !validPrice(p.USD) {
		return p, fmt.Errorf("the price %v is not a positive number", p.USD)
	}
	return p, nil
}
