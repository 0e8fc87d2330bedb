package redact

import (
	"hash/crc32"
	"sort"
	"strings"
	"testing"
)

func TestBIP39Wordlist(t *testing.T) {
	// CRC-32 of bitcoin/bips bip-0039/english.txt, as checked by
	// github.com/tyler-smith/go-bip39/wordlists.
	if got := crc32.ChecksumIEEE([]byte(bip39English)); got != 0xc1dbd296 {
		t.Fatalf("crc32(bip39_english.txt) = %08x, want c1dbd296", got)
	}
	words := strings.Split(strings.TrimSuffix(bip39English, "\n"), "\n")
	if len(words) != bip39Words {
		t.Fatalf("bip39_english.txt has %d words, want %d", len(words), bip39Words)
	}
	if !sort.StringsAreSorted(words) {
		t.Fatal("bip39_english.txt is not sorted; isBIP39Word needs it sorted")
	}
	for _, w := range words {
		if !isLowerWord(w) || !isBIP39Word(w) {
			t.Fatalf("isBIP39Word(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"", "a", "the", "and", "aaa", "abando", "abandons", "zzz", "zoos", "Abandon"} {
		if isBIP39Word(w) {
			t.Errorf("isBIP39Word(%q) = true, want false", w)
		}
	}
}

func TestFindMnemonicLength(t *testing.T) {
	words := strings.Fields("abandon ability able about above absent absorb abstract absurd abuse access accident account accuse achieve acid acoustic acquire across act action actor actress actual")
	for n := 1; n <= len(words); n++ {
		in := strings.Join(words[:n], " ")
		want := in
		if n >= minMnemonic {
			want = Mask
		}
		t.Run(strings.Repeat("w", n), func(t *testing.T) {
			if got := String(in); got != want {
				t.Errorf("String(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestMnemonicProse(t *testing.T) {
	// Ordinary sentences, some dense with BIP-39 words, must stay readable.
	for _, in := range []string{
		"Please review the pull request and merge it if the tests pass on every platform we support.",
		"you can also ask about that area above all and this is the art of the army",
		"list all files in this folder and then open the one that was changed most recently",
		"The agent wants to transfer funds to a new wallet address after the market opens tomorrow morning.",
		"build the project, run the unit tests, then deploy to the staging cluster and check the logs",
		"Summarize this article about climate change and its impact on coastal cities over the next century.",
	} {
		t.Run(in[:20], func(t *testing.T) {
			if got := String(in); got != in {
				t.Errorf("String(%q) = %q, want it unchanged", in, got)
			}
		})
	}
}
