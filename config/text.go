package config

import (
	"strconv"
	"unicode/utf8"
)

// maxShown is the most runes of a value quoted back in a message.
const maxShown = 40

// clip shortens s for a message.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxShown {
		return s
	}
	r := []rune(s)
	return string(r[:maxShown]) + "…"
}

// quote quotes s, shortened, for a message.
func quote(s string) string { return strconv.Quote(clip(s)) }

func itoa(i int) string { return strconv.Itoa(i) }

// joinKey appends name to a dotted key; at the top of the file parent is "".
func joinKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
