package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ncruces/go-sqlite3"

	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/paper"
)

// paperSchema holds the paper exchange's tables (schema version 3): its book,
// one JSON row rewritten by every trade, and its fills, append-only.
var paperSchema = `
CREATE TABLE paper_book (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	book       TEXT    NOT NULL CHECK (json_valid(book)),  -- JSON paper.Book
	updated_at INTEGER NOT NULL         -- Unix milliseconds
) STRICT;

CREATE TABLE paper_fills (
	seq        INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	trace_id   TEXT    NOT NULL,
	created_at INTEGER NOT NULL,        -- Unix milliseconds: the fill's time
	fill       TEXT    NOT NULL CHECK (json_valid(fill))   -- JSON finance.Fill
) STRICT;
CREATE INDEX paper_fills_trace_id ON paper_fills (trace_id);
` + appendOnly("paper_fills", "seq = NEW.seq OR id = NEW.id")

const (
	sqlGetPaperBook = `SELECT book FROM paper_book WHERE id = 1`
	sqlPutPaperBook = `INSERT INTO paper_book (id, book, updated_at) VALUES (1, ?, ?)
ON CONFLICT (id) DO UPDATE SET book = excluded.book, updated_at = excluded.updated_at`
	sqlInsertPaperFill = `INSERT INTO paper_fills (id, trace_id, created_at, fill) VALUES (?, ?, ?, ?)`
)

// PaperBook is the paper exchange's book in the audit database. Every Update
// is one BEGIN IMMEDIATE transaction, so updates from any number of processes
// sharing the file are serialised and none is lost.
type PaperBook struct{ s *Store }

var _ paper.Store = (*PaperBook)(nil)

// PaperBook returns the paper exchange's store in s.
func (s *Store) PaperBook() *PaperBook { return &PaperBook{s: s} }

// Update reads the book, runs fn on it and, when fn returns nil, writes the
// book back and appends its NewFills, all in one write transaction. fn's
// error is returned unchanged and nothing is written.
func (p *PaperBook) Update(ctx context.Context, fn func(*paper.Book) error) error {
	var fnErr error
	err := p.s.write(ctx, func(w *conn) error {
		b, err := loadPaperBook(w)
		if err != nil {
			return err
		}
		b.NewFills = nil
		if err := fn(b); err != nil {
			fnErr = err
			return err
		}
		fills := b.NewFills
		b.NewFills = nil
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		st, err := w.prepare(sqlPutPaperBook)
		if err != nil {
			return err
		}
		bd := binder{st: st}
		bd.json(data)
		bd.int(p.s.now().UnixMilli())
		if err := bd.exec(); err != nil {
			return err
		}
		for i := range fills {
			if err := insertPaperFill(w, &fills[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("update the paper book: %w", err)
	}
	return nil
}

func insertPaperFill(w *conn, f *finance.Fill) error {
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode fill %s: %w", f.ID, err)
	}
	st, err := w.prepare(sqlInsertPaperFill)
	if err != nil {
		return err
	}
	at := f.At
	if at.IsZero() {
		at = millis(0)
	}
	b := binder{st: st}
	b.text(f.ID)
	b.text(f.TraceID)
	b.int(at.UnixMilli())
	b.json(data)
	if err := b.exec(); err != nil {
		return fmt.Errorf("append fill %s: %w", f.ID, err)
	}
	return nil
}

// View runs fn on the book as last committed. The book is one row read by
// one statement, so it reads on the write connection, like SpentSince: a
// short process (a one-shot trade check) then opens a single connection.
func (p *PaperBook) View(ctx context.Context, fn func(*paper.Book) error) error {
	b, err := p.load(ctx)
	if err != nil {
		return fmt.Errorf("read the paper book: %w", err)
	}
	return fn(b)
}

func (p *PaperBook) load(ctx context.Context) (*paper.Book, error) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openLocked(ctx); err != nil {
		return nil, err
	}
	defer s.w.withContext(ctx)()
	return loadPaperBook(s.w)
}

// loadPaperBook reads the book on c; a database without one has an empty,
// unfunded book. The JSON is decoded strictly, so a book written by a newer
// warden is refused rather than rewritten without its new fields.
func loadPaperBook(c *conn) (*paper.Book, error) {
	st, err := c.prepare(sqlGetPaperBook)
	if err != nil {
		return nil, err
	}
	defer st.Reset()
	b := &paper.Book{}
	if !st.Step() {
		return b, st.Err()
	}
	if err := json.Unmarshal(st.ColumnRawText(0), b); err != nil { // strict: see paper.Book.UnmarshalJSON
		return nil, fmt.Errorf("the stored paper book: %w", err)
	}
	return b, nil
}

// PaperFills returns the paper exchange's fills, newest first; with limit > 0
// only the newest limit.
func (s *Store) PaperFills(ctx context.Context, limit int) ([]finance.Fill, error) {
	sql := `SELECT fill FROM paper_fills ORDER BY seq DESC`
	var args []any
	if limit > 0 {
		sql += ` LIMIT ?`
		args = append(args, limit)
	}
	var out []finance.Fill
	err := s.read(ctx, func(r *conn) error {
		return query(r, sql, args, func(st *sqlite3.Stmt) error {
			f, err := paper.DecodeFill(st.ColumnRawText(0))
			if err != nil {
				return err
			}
			out = append(out, f)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list paper fills: %w", err)
	}
	return out, nil
}
