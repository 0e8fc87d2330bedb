package fstools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// swapper keeps exchanging two names in the root: a directory d holding
// secret.txt with inside content, and a symlink to the outside directory.
type swapper struct {
	d, link string // absolute paths of the two names
	stop    chan struct{}
	done    sync.WaitGroup
	swaps   atomic.Int64
	method  string
}

// startSwapper makes root/d a directory and root/link a symlink to outside,
// and starts a goroutine that swaps them until stop is called. It uses
// renameat2(RENAME_EXCHANGE), which swaps both names in one step; where the
// kernel or file system lacks it, d is instead a symlink replaced, in turn, by
// one to an inside directory and one to outside (symlink, then rename).
func startSwapper(t *testing.T, root, outside string) *swapper {
	t.Helper()
	s := &swapper{d: filepath.Join(root, "d"), link: filepath.Join(root, "link"), stop: make(chan struct{})}
	writeFile(t, filepath.Join(s.d, "secret.txt"), "inside\n")
	symlink(t, outside, s.link)

	err := unix.Renameat2(unix.AT_FDCWD, s.d, unix.AT_FDCWD, s.link, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		s.method = "renameat2(RENAME_EXCHANGE)"
		s.done.Go(func() {
			for {
				select {
				case <-s.stop:
					return
				default:
				}
				if err := unix.Renameat2(unix.AT_FDCWD, s.d, unix.AT_FDCWD, s.link, unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("renameat2: %v", err)
					return
				}
				s.swaps.Add(1)
			}
		})
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL):
		s.method = "symlink and rename"
		inside := filepath.Join(root, "inside")
		if err := os.Rename(s.d, inside); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(root, "tmp-link")
		s.done.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-s.stop:
					return
				default:
				}
				target := "inside"
				if i%2 == 1 {
					target = outside
				}
				os.Remove(tmp)
				if err := os.Symlink(target, tmp); err != nil {
					t.Errorf("symlink: %v", err)
					return
				}
				if err := os.Rename(tmp, s.d); err != nil {
					t.Errorf("rename: %v", err)
					return
				}
				s.swaps.Add(1)
			}
		})
	default:
		t.Fatalf("renameat2: %v", err)
	}
	return s
}

func (s *swapper) Stop() {
	close(s.stop)
	s.done.Wait()
}

// naiveRead is the check-then-use implementation the race test must catch:
// resolve symlinks, check that the result is inside the root, then open the
// path again.
func naiveRead(root, name string) ([]byte, error) {
	p := filepath.Join(root, name)
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(resolved, root+string(filepath.Separator)) {
		return nil, errors.New("outside the root")
	}
	return os.ReadFile(p)
}

// TestSwapRace reads d/secret.txt over and over while another goroutine keeps
// swapping the directory d with a symlink to a directory outside the root.
// Through Root.Read, no read may ever return the outside file. The same loop
// through naiveRead must leak at least once, which shows the test can fail.
//
// Timing: 100,000 reads a side take 2 to 3.5 s in all with -race on a 2-core
// machine (under 1 s without), so the full count runs unless -short.
func TestSwapRace(t *testing.T) {
	reads := 100_000
	if testing.Short() {
		reads = 10_000
	}
	root, outside := newDirs(t)
	root, err := filepath.EvalSymlinks(root) // naiveRead compares resolved paths
	if err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, root, Limits{})
	s := startSwapper(t, root, outside)
	defer s.Stop()

	// count reads n times, and with untilLeak goes on, for at most 10 s,
	// until a read leaks.
	count := func(read func(string) ([]byte, error), untilLeak bool) (n, inside, leaked, failed int) {
		deadline := time.Now().Add(10 * time.Second)
		for ; n < reads || untilLeak && leaked == 0 && time.Now().Before(deadline); n++ {
			b, err := read("d/secret.txt")
			switch {
			case err != nil:
				failed++
			case strings.Contains(string(b), outsideSecret):
				leaked++
			case string(b) == "inside\n":
				inside++
			default:
				t.Fatalf("read returned %q", b)
			}
		}
		return n, inside, leaked, failed
	}

	start := time.Now()
	n, inside, leaked, failed := count(r.Read, false)
	t.Logf("Root.Read: %d reads in %v: %d inside, %d refused, %d outside (%d swaps by %s)",
		n, time.Since(start).Round(time.Millisecond), inside, failed, leaked, s.swaps.Load(), s.method)
	if leaked != 0 {
		t.Errorf("Root.Read returned the outside file %d times in %d reads, want 0", leaked, n)
	}
	if inside == 0 || failed == 0 {
		t.Errorf("Root.Read saw %d inside and %d refused reads; the swapper is not swapping", inside, failed)
	}

	// With one CPU (go test -cpu 1) the naive read leaks rarely, a few
	// times in 100,000, hence untilLeak.
	start = time.Now()
	n, inside, leaked, failed = count(func(name string) ([]byte, error) { return naiveRead(root, name) }, true)
	t.Logf("naive read: %d reads in %v: %d inside, %d refused, %d outside (%d swaps)",
		n, time.Since(start).Round(time.Millisecond), inside, failed, leaked, s.swaps.Load())
	if leaked == 0 {
		t.Errorf("the naive check-then-read never leaked in %d reads; the test cannot tell a safe Read from an unsafe one", n)
	}
}
