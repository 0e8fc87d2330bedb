package paper

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// Store keeps the Book of one paper wallet.
//
// Update runs fn on the current book inside one transaction and saves the
// book, and appends the fills in Book.NewFills, only when fn returns nil; it
// returns fn's error unchanged, and any other error means nothing was saved.
// Updates are serialised: for a store shared between processes (the SQLite
// adapter's PaperBook) two processes never both update the same book state.
//
// View runs fn on a snapshot of the current book; changes fn makes to it are
// discarded. It returns fn's error unchanged.
//
// A store that has never been updated presents an empty, unfunded Book.
type Store interface {
	Update(ctx context.Context, fn func(*Book) error) error
	View(ctx context.Context, fn func(*Book) error) error
}

// Book is a paper wallet's state. Its maps may be nil in a book a store has
// just decoded; the Exchange creates them as needed. The zero value is an
// empty, unfunded book.
type Book struct {
	// Funded is set once the book has received its starting cash.
	Funded bool `json:"funded"`
	// Cash is the one chain-agnostic stablecoin balance.
	Cash warden.USD `json:"cash"`
	// Balances are the units held of each non-stable token, by token key.
	Balances map[string]float64 `json:"balances"`
	// Tokens describes each key of Balances.
	Tokens map[string]finance.Token `json:"tokens"`
	// Positions are the open perpetual positions, by id.
	Positions map[string]finance.Position `json:"positions"`
	// NewFills are the fills this update appended. A store persists them
	// append-only, apart from the book, and clears the slice; they are never
	// part of the book's own JSON.
	NewFills []finance.Fill `json:"-"`
}

// Clone returns a deep copy of b.
func (b *Book) Clone() *Book {
	return &Book{
		Funded:    b.Funded,
		Cash:      b.Cash,
		Balances:  maps.Clone(b.Balances),
		Tokens:    maps.Clone(b.Tokens),
		Positions: maps.Clone(b.Positions),
		NewFills:  slices.Clone(b.NewFills),
	}
}

// init creates the book's nil maps.
func (b *Book) init() {
	if b.Balances == nil {
		b.Balances = map[string]float64{}
	}
	if b.Tokens == nil {
		b.Tokens = map[string]finance.Token{}
	}
	if b.Positions == nil {
		b.Positions = map[string]finance.Position{}
	}
}

// MemStore is a Store in memory, for tests and one-process demos. The zero
// value is an empty store, ready to use; it must not be copied after first
// use.
type MemStore struct {
	mu    sync.Mutex
	book  Book
	fills []finance.Fill
}

var _ Store = (*MemStore)(nil)

// Update runs fn on a copy of the book and keeps the copy when fn returns nil.
func (m *MemStore) Update(ctx context.Context, fn func(*Book) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.book.Clone()
	b.NewFills = nil
	if err := fn(b); err != nil {
		return err
	}
	m.fills = append(m.fills, b.NewFills...)
	b.NewFills = nil
	m.book = *b
	return nil
}

// View runs fn on a copy of the book.
func (m *MemStore) View(ctx context.Context, fn func(*Book) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	b := m.book.Clone()
	m.mu.Unlock()
	return fn(b)
}

// Fills returns the fills appended so far, newest first; with limit > 0
// only the newest limit.
func (m *MemStore) Fills(limit int) []finance.Fill {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.fills)
	slices.Reverse(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
