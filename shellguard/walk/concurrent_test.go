package walk

import (
	"sync"
	"testing"
)

// TestConcurrent runs Walk from many goroutines (parsers come from a
// sync.Pool); run it with -race.
func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range walkCases {
				tc := walkCases[(i+g)%len(walkCases)]
				r := Walk(tc.src, testOpt)
				if hasIssue(r, Internal) {
					t.Errorf("Walk(%q) = internal issue, want none", tc.src)
				}
			}
		}()
	}
	wg.Wait()
}
