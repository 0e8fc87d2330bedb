package config

import (
	"strconv"

	"github.com/agentwarden/warden/internal/clip"
)

// maxShown is the most runes of a value quoted back in a message.
const maxShown = 40

// quote quotes s, shortened to maxShown runes, for a message.
func quote(s string) string { return strconv.Quote(clip.String(s, maxShown)) }

func itoa(i int) string { return strconv.Itoa(i) }

// joinKey appends name to a dotted key; at the top of the file parent is "".
func joinKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
