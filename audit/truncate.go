package audit

import (
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

// TruncationMark ends an output that Truncate shortened.
const TruncationMark = "…[truncated]"

// Truncate returns output unchanged when it fits in warden.OutputLimit bytes;
// otherwise the longest prefix that, followed by TruncationMark, fits, cut on a
// UTF-8 rune boundary so a valid string stays valid. Truncate(Truncate(s)) ==
// Truncate(s).
func Truncate(output string) string {
	if len(output) <= warden.OutputLimit {
		return output
	}
	cut := warden.OutputLimit - len(TruncationMark)
	// Back up to the start of the rune that straddles the cut; a rune is at
	// most utf8.UTFMax bytes, so never back up further than that in invalid
	// input.
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(output[cut]); i++ {
		cut--
	}
	return output[:cut] + TruncationMark
}
