package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentwarden/warden"
)

// TestFullDiskSaysSoAndLosesNothing: on a filesystem that fills up, a
// Record fails with a *warden.Error saying the disk is full and what to do
// (SQLite itself says only "disk I/O error"), nothing of it is stored, and
// once space is freed recording goes on and the chain verifies with every
// row that was acknowledged. Needs root, for a 1 MiB tmpfs of its own.
func TestFullDiskSaysSoAndLosesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs to fill (run as root, as make test does in CI)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	h := anchoredHome{dir: dir, db: filepath.Join(dir, "warden.db"),
		opt: Options{Anchor: filepath.Join(dir, "audit.anchor"), Key: filepath.Join(dir, "audit.key")}}
	create := h.opt
	create.Create, create.LongLived = true, true
	s, err := OpenWith(ctx, h.db, create)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	acked := 0
	record := func() error {
		err := s.Record(ctx, spoolEntry(acked), nil)
		if err == nil {
			acked++
		}
		return err
	}
	for range 5 {
		if err := record(); err != nil {
			t.Fatal(err)
		}
	}
	fill := filepath.Join(dir, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	var failed error
	for range 200 {
		if failed = record(); failed != nil {
			break
		}
	}
	var we *warden.Error
	if !errors.As(failed, &we) || !strings.Contains(we.Message, "full") || !strings.Contains(we.Hint, "free space") {
		t.Fatalf("Record on a full disk = %v; want a *warden.Error saying the disk is full and to free space", failed)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if err := record(); err != nil {
		t.Fatalf("Record after space was freed: %v", err)
	}
	s.Close()
	rep := h.verify(t)
	if !rep.OK() || rep.AuditRows != int64(acked) {
		t.Fatalf("Verify = %+v; want it whole with the %d acknowledged rows", rep, acked)
	}
}
