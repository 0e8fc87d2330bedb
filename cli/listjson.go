package cli

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
)

// writeConfigJSON writes `config list --json`: one JSON object of every
// key and its effective value, in the order config list shows them.
func writeConfigJSON(w io.Writer, kvs []config.KV) error {
	var b strings.Builder
	b.WriteString("{")
	for i, kv := range kvs {
		if i > 0 {
			b.WriteString(",")
		}
		k, err := json.Marshal(kv.Key)
		if err != nil {
			return err
		}
		v, err := json.Marshal(kv.Value)
		if err != nil {
			return err
		}
		b.WriteString("\n  ")
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	b.WriteString("\n}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeApprovalsJSON writes `approvals list --json`: one JSON object per
// approval, one per line (nothing when there is none).
func writeApprovalsJSON(w io.Writer, as []warden.Approval) error {
	enc := json.NewEncoder(w)
	for i := range as {
		if err := enc.Encode(&as[i]); err != nil {
			return err
		}
	}
	return nil
}
