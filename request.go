package warden

import (
	"encoding/json"
	"strings"
	"time"
)

// Capabilities the gate knows. A request naming any other capability is denied
// by the pipeline ("no policy for capability X").
const (
	CapShell      = "shell"
	CapFilesystem = "filesystem"
	CapNetwork    = "network"
	CapTrade      = "trade"
	CapSign       = "sign"
	CapTool       = "tool"
)

// ParamAmountUSD is the request parameter that makes a request fund-moving: the
// per-transaction max and the daily spend cap apply to every request carrying it,
// whatever its capability.
const ParamAmountUSD = "amount_usd"

// Request is one intercepted action an agent wants to take. The zero value is a
// request for nothing, which no capability allows.
type Request struct {
	TraceID     string                     `json:"trace_id,omitempty"`
	Capability  string                     `json:"capability"`
	Action      string                     `json:"action"`
	Resource    string                     `json:"resource"`
	Tool        string                     `json:"tool,omitempty"`
	Params      map[string]json.RawMessage `json:"params,omitempty"`
	Context     string                     `json:"context,omitempty"`
	RequestedBy string                     `json:"requested_by,omitempty"`
	Autonomous  bool                       `json:"autonomous,omitempty"`
	Session     string                     `json:"session,omitempty"`
	Host        string                     `json:"host,omitempty"`
	Cwd         string                     `json:"cwd,omitempty"`
	// Snapshots says the caller saves, before it runs a shell command, the
	// uncommitted work of every git work tree its decision names in
	// Decision.Snapshot, where `warden undo` brings it back, and does not
	// run the command when it cannot (warden exec does; a hook sets it for
	// the hosts whose commands it wraps in warden exec). The shell guard then
	// allows a git command that discards uncommitted work it can save,
	// instead of asking. False (a caller that runs the command as it is:
	// Cursor, a bare `warden check`) keeps the ask.
	Snapshots bool `json:"snapshots,omitempty"`
	// Raw is the host's payload, kept verbatim (after redaction) for the audit log.
	Raw json.RawMessage `json:"raw,omitempty"`
	// Unset, when set, reports a variable the environment a shell command
	// runs with does not set: warden exec knows the command's own; a hook
	// whose command warden exec runs (and decides again there) passes the
	// host's. The shell guard then reads ${NAME:-word} of such a name as
	// word (Decision.EnvUnset). In process only: never sent or stored.
	Unset func(name string) bool `json:"-"`

	// Tier is set by the gate from the policy file, never by the caller: the JSON
	// decoder ignores it so an agent cannot lower its own tier.
	Tier Tier `json:"-"`
	// Received is when the gate took the request; set by the gate.
	Received time.Time `json:"-"`
	// Protective marks a risk-reducing exit that warden's own stop-loss
	// monitor issues. Only warden's code sets it, in-process: the JSON
	// decoder ignores it, so no caller can claim it. A protective exit is
	// exempt from the per-transaction max and the daily cap (it spends
	// nothing), asks a human while the kill switch is on, and meets every
	// other stage.
	Protective bool `json:"-"`
}

// ToolName is the tool whose tier governs the request: Tool when set, otherwise
// the resource of a tool-capability request.
func (r *Request) ToolName() string {
	if r.Tool != "" {
		return r.Tool
	}
	if r.Capability == CapTool {
		return r.Resource
	}
	return ""
}

// AmountUSD returns the request's params.amount_usd. ok is false when the request
// is not fund-moving; err is set when the parameter is present but is not a
// non-negative decimal amount — such a request must be denied, never waved through.
func (r *Request) AmountUSD() (amount USD, ok bool, err error) {
	raw, present := r.Params[ParamAmountUSD]
	if !present {
		return 0, false, nil
	}
	amount, err = ParseUSDJSON(raw)
	return amount, true, err
}

// UnsetIn returns what reports a variable env (NAME=value entries) does
// not set, for Request.Unset.
func UnsetIn(env []string) func(name string) bool {
	set := make(map[string]bool, len(env))
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok {
			set[k] = true
		}
	}
	return func(name string) bool { return !set[name] }
}
