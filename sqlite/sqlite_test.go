package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit/audittest"
)

var ctx = context.Background()

// openTest opens a new store in a fresh directory, closed when t ends.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "warden.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

func TestConformance(t *testing.T) {
	audittest.Run(t, func(t *testing.T) audittest.Store {
		s, _ := openTest(t)
		return s
	})
}

func TestApprovalConformance(t *testing.T) {
	audittest.RunApprovals(t, func(t *testing.T) warden.ApprovalStore {
		s, _ := openTest(t)
		return s
	})
}
