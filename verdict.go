// Package warden holds the domain of the warden security gate: the Request an agent
// makes, the Decision the gate returns, permission tiers, the stage and store
// interfaces that every capability and backend implements, and the one Error type.
//
// It imports the standard library only, so every other package can depend on it.
// The zero value of every type here is the safe one: a zero Verdict is Deny, a zero
// Tier is resolved to ALWAYS_CONFIRM.
package warden

import "fmt"

// Verdict is the gate's answer to one request. The zero value is Deny, so a
// Decision that was never filled in refuses.
type Verdict uint8

const (
	Deny    Verdict = iota // refuse; the zero value
	Allow                  // run as asked
	Sandbox                // run, but only inside the isolation the decision names
	Ask                    // a human must confirm first
)

var verdictNames = [...]string{Deny: "deny", Allow: "allow", Sandbox: "sandbox", Ask: "ask"}

// String returns the lower-case name used in JSON, the CLI and the audit log.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// ParseVerdict reads a verdict name as printed by String.
func ParseVerdict(s string) (Verdict, error) {
	for i, n := range verdictNames {
		if n == s {
			return Verdict(i), nil
		}
	}
	return Deny, fmt.Errorf("unknown verdict %q (want allow, sandbox, ask or deny)", s)
}

// rank orders verdicts by precedence: deny > ask > sandbox > allow.
func (v Verdict) rank() int {
	switch v {
	case Allow:
		return 0
	case Sandbox:
		return 1
	case Ask:
		return 2
	default: // Deny and anything unknown
		return 3
	}
}

// Stronger reports whether v takes precedence over w.
func (v Verdict) Stronger(w Verdict) bool { return v.rank() > w.rank() }

// Strongest returns the verdict with the highest precedence; with no verdicts it
// returns Deny.
func Strongest(vs ...Verdict) Verdict {
	if len(vs) == 0 {
		return Deny
	}
	out := vs[0]
	for _, v := range vs[1:] {
		if v.Stronger(out) {
			out = v
		}
	}
	return out
}

// MarshalText encodes the verdict by name.
func (v Verdict) MarshalText() ([]byte, error) {
	if int(v) >= len(verdictNames) {
		return nil, fmt.Errorf("marshal verdict: invalid value %d", uint8(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText decodes a verdict name; anything else is an error.
func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := ParseVerdict(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}
