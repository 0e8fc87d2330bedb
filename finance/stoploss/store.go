package stoploss

import (
	"context"
	"math"
	"sync"

	"github.com/agentwarden/warden"
)

// Store keeps the stop-loss rules and the high-water marks. Implementations:
// MemStore (tests) and the sqlite adapter's StopLossStore. Both are safe for
// concurrent use.
//
// Errors: an error from Rules or Marks means nothing could be read; from
// AddRule, RemoveRule or SetMark that nothing changed. AddRule returns a
// *warden.Error with EInvalid for a rule that fails Validate or has no id and
// EConflict for an id already used (also by a removed rule); RemoveRule
// returns ENotFound for an id that is not an active rule; SetMark returns
// EInvalid for a NaN or infinite value.
type Store interface {
	// Rules returns the active rules, in the order they were added.
	Rules(ctx context.Context) ([]Rule, error)
	// AddRule stores a new rule.
	AddRule(ctx context.Context, r Rule) error
	// RemoveRule retires the rule with id. A removed rule is kept (the store
	// is a record of what was set) but no longer listed or applied.
	RemoveRule(ctx context.Context, id string) error
	// Marks returns every high-water mark by its key (see MarkKey). A long's
	// mark is its peak; a short's is its trough negated, so that the one
	// direction a mark moves (up) ratchets both.
	Marks(ctx context.Context) (map[string]float64, error)
	// SetMark raises the mark of key to v. A mark only rises: a v at or
	// below the stored mark leaves it unchanged and is not an error.
	SetMark(ctx context.Context, key string, v float64) error
}

// MarkKey is the key of the high-water mark that rule r uses on target: a
// position's id (every rule on a position shares the peak since it opened),
// or for a holding, which has no opening of its own, the target and the
// rule's id ("base:WETH#sl_…"): the peak since that rule set its entry.
func MarkKey(target string, r Rule, position bool) string {
	if position || r.ID == "" {
		return target
	}
	return target + "#" + r.ID
}

// markValue is the stored form of a peak: a long's peak as it is, a
// short's trough negated, so that raising the stored mark lowers the trough
// and a Store needs only one direction.
func markValue(peak float64, short bool) float64 {
	if short {
		return -peak
	}
	return peak
}

// CheckAdd is the validation every Store's AddRule performs: the rule is
// valid and has an id.
func CheckAdd(r Rule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.ID == "" {
		return warden.Errorf(warden.EInvalid, "stop-loss rule for %s has no id", r.Target).WithHint("Monitor.AddRule assigns one")
	}
	return nil
}

// CheckMark is the validation of SetMark's value: finite.
func CheckMark(key string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return warden.Errorf(warden.EInvalid, "high-water mark of %s is %v; want a finite number", key, v)
	}
	return nil
}

// MemStore is a Store in memory, for tests. The zero value is empty and
// ready to use.
type MemStore struct {
	mu      sync.Mutex
	rules   []Rule
	removed map[string]bool
	marks   map[string]float64
}

var _ Store = (*MemStore)(nil)

// Rules implements Store.
func (s *MemStore) Rules(context.Context) ([]Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Rule
	for _, r := range s.rules {
		if !s.removed[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// AddRule implements Store.
func (s *MemStore) AddRule(_ context.Context, r Rule) error {
	if err := CheckAdd(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.rules {
		if x.ID == r.ID {
			return warden.Errorf(warden.EConflict, "a stop-loss rule %s exists already", r.ID)
		}
	}
	s.rules = append(s.rules, r)
	return nil
}

// RemoveRule implements Store.
func (s *MemStore) RemoveRule(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.rules {
		if x.ID == id && !s.removed[id] {
			if s.removed == nil {
				s.removed = map[string]bool{}
			}
			s.removed[id] = true
			return nil
		}
	}
	return warden.Errorf(warden.ENotFound, "no active stop-loss rule %q", id)
}

// Marks implements Store.
func (s *MemStore) Marks(context.Context) (map[string]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]float64, len(s.marks))
	for k, v := range s.marks {
		out[k] = v
	}
	return out, nil
}

// SetMark implements Store.
func (s *MemStore) SetMark(_ context.Context, key string, v float64) error {
	if err := CheckMark(key, v); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.marks == nil {
		s.marks = map[string]float64{}
	}
	if old, ok := s.marks[key]; !ok || v > old {
		s.marks[key] = v
	}
	return nil
}
