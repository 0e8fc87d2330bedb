package inject

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Decoded views: the encodings an attacker uses to slip a literal payload
// past a keyword scanner. Each is derived from the scan view (or, for blobs,
// from the original) and keeps the map back to the original text.

// leetMap undoes the common leetspeak substitutions.
var leetMap = [128]byte{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's', '!': 'i'}

// deleet returns v with leetspeak undone inside words that mix letters with
// leet digits ("1gn0r3" → "ignore"), and whether anything changed. Every
// substitution is one ASCII byte for another, so the map is unchanged.
func deleet(v view) (view, bool) {
	b := []byte(v.text)
	changed := false
	for i := 0; i < len(b); {
		if !isWordByte(b[i]) {
			i++
			continue
		}
		j := i
		letters, leets := 0, 0
		for j < len(b) && isWordByte(b[j]) {
			if b[j] >= 'a' && b[j] <= 'z' {
				letters++
			} else if leetMap[b[j]] != 0 {
				leets++
			}
			j++
		}
		// A word of letters with one or a few leet characters; a number,
		// a code such as an IBAN or an id is left alone.
		if letters >= 2 && leets > 0 && leets*2 <= letters+1 {
			for k := i; k < j; k++ {
				if c := leetMap[b[k]]; c != 0 {
					b[k] = c
					changed = true
				}
			}
		}
		i = j
	}
	if !changed {
		return v, false
	}
	return view{text: string(b), start: v.start, end: v.end}, true
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c < 128 && leetMap[c] != 0
}

// rot13 returns v with ASCII letters rotated by 13.
func rot13(v view) view {
	b := []byte(v.text)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		}
	}
	return view{text: string(b), start: v.start, end: v.end}
}

// reversed returns v with its characters in reverse order: text written
// backwards, or displayed forwards by a right-to-left override.
func reversed(v view) view {
	n := len(v.text)
	b := make([]byte, n)
	r := view{start: make([]int32, n), end: make([]int32, n)}
	for i := 0; i < n; {
		_, m := utf8.DecodeRuneInString(v.text[i:])
		copy(b[n-i-m:], v.text[i:i+m])
		for k := 0; k < m; k++ {
			r.start[n-i-m+k] = v.start[i+k]
			r.end[n-i-m+k] = v.end[i+k]
		}
		i += m
	}
	r.text = string(b)
	return r
}

var (
	base64Blob = lazyRegexp(`[A-Za-z0-9+/_-]{24,}={0,2}`)
	hexBlob    = lazyRegexp(`(?:[0-9a-fA-F]{2}[ :]?){12,}`)
)

// maxBlobs bounds the encoded blobs decoded in one text.
const maxBlobs = 64

// blobs decodes the base64 and hex blobs in s (up to depth levels of
// nesting) and returns each decoded text's scan view, mapped wholly to the
// blob's span in s shifted by base.
func blobs(s string, base, depth int) []view {
	var out []view
	add := func(loc []int, decoded []byte) {
		if !readable(decoded) {
			return
		}
		span := Span{base + loc[0], base + loc[1]}
		d := normalize(string(decoded))
		for i := range d.start {
			d.start[i], d.end[i] = int32(span.Start), int32(span.End)
		}
		out = append(out, d)
		if depth > 1 {
			for _, v := range blobs(string(decoded), 0, depth-1) {
				for i := range v.start {
					v.start[i], v.end[i] = int32(span.Start), int32(span.End)
				}
				out = append(out, v)
			}
		}
	}
	for _, loc := range base64Blob().FindAllStringIndex(s, maxBlobs) {
		blob := s[loc[0]:loc[1]]
		if !hasMixedCase(blob) {
			continue // a word, a path or a hex digest, not base64
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if d, err := enc.DecodeString(blob); err == nil {
				add(loc, d)
				break
			}
		}
	}
	for _, loc := range hexBlob().FindAllStringIndex(s, maxBlobs) {
		blob := strings.NewReplacer(" ", "", ":", "").Replace(s[loc[0]:loc[1]])
		if len(blob)%2 == 1 {
			blob = blob[:len(blob)-1]
		}
		if d, err := hex.DecodeString(blob); err == nil {
			add(loc, d)
		}
	}
	return out
}

func hasMixedCase(s string) bool {
	upper, lower := false, false
	for i := 0; i < len(s); i++ {
		upper = upper || s[i] >= 'A' && s[i] <= 'Z'
		lower = lower || s[i] >= 'a' && s[i] <= 'z'
	}
	return upper && lower
}

// readable reports decoded bytes that are text: valid UTF-8, mostly letters
// and spaces. Random binary that happens to decode is not scanned.
func readable(b []byte) bool {
	if len(b) < 8 || !utf8.Valid(b) {
		return false
	}
	good, all := 0, 0
	for _, r := range string(b) {
		all++
		if unicode.IsLetter(r) || r == ' ' {
			good++
		}
	}
	return good*10 >= all*7
}
