package postgres

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

var auditAll = warden.AuditFilter{}

// sqlf formats SQL for a test's tampering: strings become literals, byte
// slices bytea literals.
func sqlf(format string, args ...any) string {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case []byte:
			args[i] = `'\x` + hex.EncodeToString(v) + `'::bytea`
		}
	}
	return fmt.Sprintf(format, args...)
}

func appendEntry(e *warden.AuditEntry) []byte { return audit.AppendEntry(nil, e) }
