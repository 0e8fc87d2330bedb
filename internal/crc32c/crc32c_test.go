package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// TestChecksumIsCRC32C checks Checksum and Update against hash/crc32's
// Castagnoli on both paths: byte by byte (budget left) and hardware (budget
// spent, or an input longer than it).
func TestChecksumIsCRC32C(t *testing.T) {
	// The check value of CRC-32C: "123456789" → 0xe3069283.
	if got := Checksum([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("Checksum(%q) = %#08x, want 0xe3069283", "123456789", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	lengths := []int{0, 1, 7, 8, 63, 64, 503, 504, 505, 4096, 4611, budget - 1, budget, budget + 1, 3 * budget}
	for _, phase := range []string{"bytewise", "hardware"} {
		t.Run(phase, func(t *testing.T) {
			if phase == "bytewise" {
				bytewise.Store(0)
			} else {
				bytewise.Store(budget + 1)
			}
			for _, n := range lengths {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				if phase == "bytewise" && n < budget {
					bytewise.Store(0)
				}
				if got, want := Checksum(b), crc32.Checksum(b, castagnoli); got != want {
					t.Errorf("Checksum(%d random bytes) = %#08x, want %#08x", n, got, want)
				}
				half := n / 2
				if got, want := Update(Update(0, b[:half]), b[half:]), crc32.Checksum(b, castagnoli); got != want {
					t.Errorf("Update in two halves of %d random bytes = %#08x, want %#08x", n, got, want)
				}
			}
		})
	}
}

// TestBudgetSwitchesToHardware checks that a process that has checksummed
// more than budget bytes uses hash/crc32's tables from then on.
func TestBudgetSwitchesToHardware(t *testing.T) {
	bytewise.Store(0)
	b := make([]byte, 1000)
	for bytewise.Load() <= budget {
		before := bytewise.Load()
		Checksum(b)
		if bytewise.Load() == before {
			t.Fatalf("Checksum did not count %d bytes with %d of the budget spent", len(b), before)
		}
	}
	spent := bytewise.Load()
	Checksum(b)
	if bytewise.Load() != spent {
		t.Errorf("Checksum counted bytes after the budget was spent (%d → %d): still byte by byte", spent, bytewise.Load())
	}
}

func FuzzChecksum(f *testing.F) {
	f.Add([]byte("123456789"), uint32(0))
	f.Add(make([]byte, 600), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, b []byte, crc uint32) {
		if got, want := Update(crc, b), crc32.Update(crc, castagnoli, b); got != want {
			t.Errorf("Update(%#08x, %d bytes) = %#08x, want %#08x", crc, len(b), got, want)
		}
	})
}

func BenchmarkChecksum4K(b *testing.B) {
	buf := make([]byte, 4611)
	b.SetBytes(int64(len(buf)))
	b.Run("bytewise", func(b *testing.B) {
		for b.Loop() {
			bytewise.Store(0)
			Checksum(buf)
		}
	})
	b.Run("hardware", func(b *testing.B) {
		bytewise.Store(budget + 1)
		for b.Loop() {
			Checksum(buf)
		}
	})
}

// TestConcurrentChecksums checks that goroutines checksumming at once, across
// the switch from byte by byte to hardware, all get hash/crc32's values (run
// with -race).
func TestConcurrentChecksums(t *testing.T) {
	bytewise.Store(0)
	b := make([]byte, 3000)
	for i := range b {
		b[i] = byte(i * 7)
	}
	want := crc32.Checksum(b, castagnoli)
	done := make(chan uint32)
	for range 8 {
		go func() {
			var bad uint32
			for range 10 {
				if got := Checksum(b); got != want {
					bad = got
				}
			}
			done <- bad
		}()
	}
	for range 8 {
		if bad := <-done; bad != 0 {
			t.Errorf("Checksum(3000 bytes) from 8 goroutines = %#08x, want %#08x", bad, want)
		}
	}
	if bytewise.Load() <= budget {
		t.Errorf("240,000 bytes checksummed left %d counted, want past the %d budget", bytewise.Load(), budget)
	}
}
