package redact

import (
	_ "embed"
	"sync"
)

// bip39English is the BIP-39 English wordlist: 2048 sorted words, one per line
// (github.com/bitcoin/bips bip-0039/english.txt, CRC-32 c1dbd296). It is
// embedded rather than imported because github.com/tyler-smith/go-bip39's
// wordlists package checksums and splits all nine languages at init.
//
//go:embed bip39_english.txt
var bip39English string

const (
	bip39Words = 2048
	// minMnemonic is the shortest BIP-39 mnemonic. A longer run of wordlist
	// words contains one, so any run this long is masked whole.
	minMnemonic = 12
	// minMnemonicLen is the fewest bytes minMnemonic words (3 letters at
	// least) and their separators take.
	minMnemonicLen = minMnemonic*3 + minMnemonic - 1
)

var (
	bip39Once  sync.Once
	bip39Start [bip39Words + 1]uint16 // offset of each word, then len(bip39English)
)

// isBIP39Word reports whether w is in the BIP-39 English wordlist. The index
// is built on first use: a text with twelve lowercase words in a row.
func isBIP39Word(w string) bool {
	bip39Once.Do(func() {
		n := 0
		for i := 0; i < len(bip39English) && n < bip39Words; i++ {
			if i == 0 || bip39English[i-1] == '\n' {
				bip39Start[n] = uint16(i)
				n++
			}
		}
		bip39Start[bip39Words] = uint16(len(bip39English))
	})
	lo, hi := 0, bip39Words
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		word := bip39English[bip39Start[m] : bip39Start[m+1]-1] // drop '\n'
		switch {
		case word == w:
			return true
		case word < w:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}

// findMnemonic appends the spans of runs of twelve or more consecutive BIP-39
// words. Words are lowercase ASCII; between two words of a run there may be
// only white space, digits and the punctuation of a numbered or quoted list
// (1. abandon 2. ability / "abandon", "ability"). Ordinary prose breaks such a
// run quickly: "the", "a", "of", "and", "is" are not in the list. It does
// nothing unless mayHold, which findShapes works out in passing.
func findMnemonic(s string, spans []span, mayHold bool) []span {
	if !mayHold || !hasLowerRun(s) {
		return spans
	}
	return appendRuns(s, spans)
}

// hasLowerRun reports whether s holds minMnemonic consecutive words that
// could be BIP-39 words (see isLowerWord), split as eachWord splits them. It
// is the cheap test that decides whether the wordlist is consulted at all.
func hasLowerRun(s string) bool {
	run, joined := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		if !isLetter(c) {
			if !isListSep(c) {
				joined = false
			}
			i++
			continue
		}
		lo := i
		lower := true
		for ; i < len(s) && is(s[i], cLetter); i++ {
			lower = lower && is(s[i], cLower)
		}
		if !joined || !lower || i-lo < 3 || i-lo > 8 {
			run = 0
		}
		if lower && i-lo >= 3 && i-lo <= 8 {
			if run++; run >= minMnemonic {
				return true
			}
		}
		joined = true
	}
	return false
}

// appendRuns appends a span for each run of at least minMnemonic wordlist
// words, from the first word's start to the last word's end.
func appendRuns(s string, spans []span) []span {
	run, first, last := 0, 0, 0
	flush := func() {
		if run >= minMnemonic {
			spans = append(spans, span{first, last})
		}
		run = 0
	}
	eachWord(s, func(lo, hi int, joined bool) {
		if !joined {
			flush()
		}
		if !isLowerWord(s[lo:hi]) || !isBIP39Word(s[lo:hi]) {
			flush()
			return
		}
		if run == 0 {
			first = lo
		}
		run++
		last = hi
	})
	flush()
	return spans
}

// eachWord calls f for every maximal run of ASCII letters in s. joined reports
// whether only list separators (see isListSep) lie between it and the previous
// run.
func eachWord(s string, f func(lo, hi int, joined bool)) {
	joined := false
	for i := 0; i < len(s); {
		c := s[i]
		if !isLetter(c) {
			if !isListSep(c) {
				joined = false
			}
			i++
			continue
		}
		lo := i
		for i < len(s) && isLetter(s[i]) {
			i++
		}
		f(lo, i, joined)
		joined = true
	}
}

// isLowerWord reports whether w could be a BIP-39 word: 3 to 8 lowercase
// ASCII letters.
func isLowerWord(w string) bool {
	if len(w) < 3 || len(w) > 8 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool { return is(c, cLetter) }

// isListSep reports whether c may separate the words of a written-out
// mnemonic: white space, digits and ,.;:"'()[].
func isListSep(c byte) bool { return is(c, cListSep) }
