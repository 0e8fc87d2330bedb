package sqlite

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/financetest"
	"github.com/agentwarden/warden/finance/paper"
)

var (
	paperT0  = time.Date(2025, 1, 2, 15, 0, 0, 0, time.UTC)
	paperUSD = finance.Token{Symbol: "USDC", Chain: finance.Chain{Name: "base", ID: 8453}, Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", AssetID: "USDC", Class: finance.ClassStablecoin, Decimals: 6, Canonical: true}
	paperETH = finance.Token{Symbol: "ETH", Chain: finance.Chain{Name: "base", ID: 8453}, AssetID: "ETH", Class: finance.ClassMajor, Decimals: 18, Canonical: true}
)

func paperExchange(s *Store) *paper.Exchange {
	return &paper.Exchange{
		Store:  s.PaperBook(),
		Prices: &paper.PathPrices{Epoch: paperT0, Ticks: map[string][]float64{"ETH": {3000}}},
		Now:    func() time.Time { return paperT0 },
	}
}

func viewBook(t *testing.T, s *Store) *paper.Book {
	t.Helper()
	var got *paper.Book
	if err := s.PaperBook().View(ctx, func(b *paper.Book) error { got = b; return nil }); err != nil {
		t.Fatalf("View: %v", err)
	}
	return got
}

func TestPaperBookRoundTrip(t *testing.T) {
	s, path := openTest(t)
	if b := viewBook(t, s); b.Funded || b.Cash != 0 || len(b.Balances)+len(b.Positions) != 0 {
		t.Errorf("a new database's book = %+v; want empty and unfunded", b)
	}
	pos := finance.Position{ID: "pos-1", Token: paperETH, Side: finance.Long, Leverage: 3, MarginUSD: 500 * warden.MicrosPerDollar,
		Size: 0.5, EntryPrice: 3000, OpenedAt: paperT0}
	fills := []finance.Fill{
		{ID: "fill-1", TraceID: "trace-1", Action: finance.Buy, At: paperT0, InToken: "USDC", InAmount: 100, OutToken: "ETH", OutAmount: 0.033, Price: 3030, ValueUSD: 100 * warden.MicrosPerDollar},
		{ID: "fill-2", TraceID: "trace-2", Action: finance.PerpOpen, At: paperT0.Add(time.Second), Position: "pos-1", ValueUSD: 500 * warden.MicrosPerDollar},
	}
	want := paper.Book{
		Funded: true, Cash: 9400 * warden.MicrosPerDollar,
		Balances:  map[string]float64{paperETH.Key(): 0.033},
		Tokens:    map[string]finance.Token{paperETH.Key(): paperETH},
		Positions: map[string]finance.Position{pos.ID: pos},
	}
	err := s.PaperBook().Update(ctx, func(b *paper.Book) error {
		*b = want
		b.NewFills = fills
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got := viewBook(t, s); !reflect.DeepEqual(*got, want) {
		t.Errorf("View after Update = %+v\nwant %+v", *got, want)
	}
	got, err := s.PaperFills(ctx, 0)
	if err != nil || !reflect.DeepEqual(got, []finance.Fill{fills[1], fills[0]}) {
		t.Errorf("PaperFills = %+v, %v; want both fills, newest first", got, err)
	}
	if got, err := s.PaperFills(ctx, 1); err != nil || len(got) != 1 || got[0].ID != "fill-2" {
		t.Errorf("PaperFills(limit 1) = %+v, %v; want the newest", got, err)
	}
	rows := queryRows(t, rawConn(t, path), `SELECT id, trace_id, created_at FROM paper_fills ORDER BY seq`, nil)
	if len(rows) != 2 || rows[0][0] != "fill-1" || rows[0][1] != "trace-1" || rows[1][2] != "1735830001000" {
		t.Errorf("paper_fills rows = %v", rows)
	}

	t.Run("the next update sees the book and stores no fill again", func(t *testing.T) {
		err := s.PaperBook().Update(ctx, func(b *paper.Book) error {
			if !reflect.DeepEqual(*b, want) {
				t.Errorf("Update got %+v; want the stored book without fills", *b)
			}
			b.Cash -= warden.MicrosPerDollar
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := s.PaperFills(ctx, 0); len(n) != 2 {
			t.Errorf("%d fills after an update that added none; want 2", len(n))
		}
	})
	t.Run("a reopened store reads the same book", func(t *testing.T) {
		s2, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if got := viewBook(t, s2); got.Cash != want.Cash-warden.MicrosPerDollar || got.Positions["pos-1"] != pos {
			t.Errorf("reopened book = %+v", got)
		}
	})
}

func TestPaperBookFailingUpdateSavesNothing(t *testing.T) {
	s, _ := openTest(t)
	e := paperExchange(s)
	c := financetest.Clearance(t, "trace-paper")
	if _, err := e.Swap(ctx, finance.SwapQuote{In: paperUSD, Out: paperETH, AmountUSD: 100 * warden.MicrosPerDollar, MaxSlippage: 0.01}, c); err != nil {
		t.Fatal(err)
	}
	before := viewBook(t, s)
	boom := errors.New("boom")
	err := s.PaperBook().Update(ctx, func(b *paper.Book) error {
		b.Cash = 0
		b.Balances = nil
		b.NewFills = append(b.NewFills, finance.Fill{ID: "never", Action: finance.Buy})
		return boom
	})
	if err != boom {
		t.Errorf("Update returned %v; want fn's error unchanged", err)
	}
	if after := viewBook(t, s); !reflect.DeepEqual(after, before) {
		t.Errorf("book after a failed update = %+v, want %+v", after, before)
	}
	if fills, _ := s.PaperFills(ctx, 0); len(fills) != 1 {
		t.Errorf("%d fills after a failed update; want only the swap's", len(fills))
	}
	// A refused order is a failing update too.
	_, err = e.Swap(ctx, finance.SwapQuote{In: paperUSD, Out: paperETH, AmountUSD: 1_000_000 * warden.MicrosPerDollar, MaxSlippage: 0.01}, c)
	if !errors.Is(err, paper.ErrInsufficientFunds) {
		t.Errorf("buying beyond the cash: %v; want ErrInsufficientFunds", err)
	}
	if after := viewBook(t, s); !reflect.DeepEqual(after, before) {
		t.Errorf("book after a refused swap = %+v, want %+v", after, before)
	}
}

// TestPaperBookConcurrentBuys buys from many goroutines through two Store
// handles on one file, as two processes would: no update may be lost.
func TestPaperBookConcurrentBuys(t *testing.T) {
	s1, path := openTest(t)
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	exchanges := []*paper.Exchange{paperExchange(s1), paperExchange(s2)}
	c := financetest.Clearance(t, "trace-paper")
	const workers, buys = 8, 25
	amount := warden.USD(10 * warden.MicrosPerDollar)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out float64
	)
	for w := range workers {
		e := exchanges[w%2]
		wg.Go(func() {
			for range buys {
				f, err := e.Swap(ctx, finance.SwapQuote{In: paperUSD, Out: paperETH, AmountUSD: amount, MaxSlippage: 0.01}, c)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				out += f.OutAmount
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b := viewBook(t, s2)
	if want := paper.DefaultStartingCash - workers*buys*amount; b.Cash != want {
		t.Errorf("cash after %d buys = %v, want exactly %v", workers*buys, b.Cash, want)
	}
	if got := b.Balances[paperETH.Key()]; got < out*(1-1e-12) || got > out*(1+1e-12) {
		t.Errorf("ETH held = %v, want the %v the fills bought", got, out)
	}
	fills, err := s1.PaperFills(ctx, 0)
	if err != nil || len(fills) != workers*buys {
		t.Fatalf("PaperFills = %d fills, %v; want %d", len(fills), err, workers*buys)
	}
	ids := map[string]bool{}
	for _, f := range fills {
		ids[f.ID] = true
	}
	if len(ids) != workers*buys {
		t.Errorf("%d distinct fill ids among %d fills", len(ids), len(fills))
	}
}

// TestPaperFillsAppendOnly shows the database refuses to change or remove a
// fill, and keeps the book to one row.
func TestPaperFillsAppendOnly(t *testing.T) {
	s, path := openTest(t)
	if _, err := paperExchange(s).Swap(ctx, finance.SwapQuote{In: paperUSD, Out: paperETH, AmountUSD: warden.MicrosPerDollar}, financetest.Clearance(t, "trace-paper")); err != nil {
		t.Fatal(err)
	}
	c := rawConn(t, path)
	for _, tc := range []struct{ name, sql, want string }{
		{"update a fill", `UPDATE paper_fills SET fill = '{}'`, "append-only"},
		{"delete a fill", `DELETE FROM paper_fills`, "append-only"},
		{"replace a fill", `INSERT OR REPLACE INTO paper_fills SELECT * FROM paper_fills WHERE seq = 1`, "append-only"},
		{"a second book", `INSERT INTO paper_book (id, book, updated_at) VALUES (2, '{}', 0)`, "CHECK constraint"},
		{"a book that is not text", `UPDATE paper_book SET book = X'7B7D'`, "cannot store BLOB value in TEXT column"},
		{"a book that is not JSON", `UPDATE paper_book SET book = '{'`, "CHECK constraint"},
		{"a fill that is not JSON", `INSERT INTO paper_fills (id, trace_id, created_at, fill) VALUES ('x', '', 0, 'nope')`, "CHECK constraint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Exec(tc.sql); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v; want the database to refuse it (%s)", tc.sql, err, tc.want)
			}
		})
	}
	if fills, err := s.PaperFills(ctx, 0); err != nil || len(fills) != 1 {
		t.Errorf("PaperFills after refused tampering = %d, %v; want the one fill", len(fills), err)
	}
}

// TestPaperBookStrict refuses a stored book with a field this warden does
// not know, rather than rewrite it without that field.
func TestPaperBookStrict(t *testing.T) {
	s, path := openTest(t)
	if err := s.PaperBook().Update(ctx, func(b *paper.Book) error { b.Funded = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := rawConn(t, path).Exec(`UPDATE paper_book SET book = '{"funded":true,"cash":1,"margin_loans":{}}'`); err != nil {
		t.Fatal(err)
	}
	err := s.PaperBook().Update(ctx, func(*paper.Book) error { t.Error("fn ran on an undecodable book"); return nil })
	if err == nil || !strings.Contains(err.Error(), "margin_loans") {
		t.Errorf("Update on a book with an unknown field: %v; want an error naming it", err)
	}
	if err := s.PaperBook().View(ctx, func(*paper.Book) error { return nil }); err == nil {
		t.Error("View decoded a book with an unknown field")
	}
}
