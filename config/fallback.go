package config

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// limit is one numeric limit of a section that an invalid section keeps when
// the file makes it stricter than the default: falling back must not loosen
// a cap the file tightened.
type limit struct {
	key   string          // the key in the section, exactly as spelled
	v     *float64        // the fallback's value, replaced when the file's is stricter
	valid bounds[float64] // what the file's value must be to count
	lower bool            // a lower value is stricter; otherwise a higher one
}

// keepStricterLimits lays over the fallback the values that the raw section
// (every copy of it, when duplicated) gives each limit, where such a value is
// valid and stricter; a key written twice counts with its strictest value. It
// returns a note naming the limits kept, or "".
func keepStricterLimits(raw []*yaml.Node, limits []limit) string {
	var kept []string
	for _, l := range limits {
		changed := false
		for _, n := range raw {
			if n == nil || n.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yaml.ScalarNode || k.Value != l.key || v.Kind != yaml.ScalarNode {
					continue
				}
				f, ok := yamlFloat(v.ShortTag(), v.Value)
				if !ok || !l.valid.contains(f) || f == *l.v || (f < *l.v) != l.lower {
					continue
				}
				*l.v, changed = f, true
			}
		}
		if changed {
			kept = append(kept, l.key)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return "the stricter values the file gives " + strings.Join(kept, ", ") + " are kept"
}

// usdBounds are the amounts checkUSD accepts.
var usdBounds = bounds[float64]{lo: 0, hi: 1e12, want: "a USD amount >= 0"}
