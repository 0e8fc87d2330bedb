package inject

import "testing"

// TestAnchors: every shipped rule has a prefilter (else it runs its regexp
// over every byte of every text), and each anchor is a literal its
// positives contain.
func TestAnchors(t *testing.T) {
	s, err := NewScanner(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.rules {
		if r.anchors == nil && r.ID != "encoded.pig-latin" { // its only literal is "ay"
			t.Errorf("rule %s has no anchors; give its pattern a required literal of %d+ bytes", r.ID, minAnchor)
		}
	}
}
