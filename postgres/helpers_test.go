package postgres

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
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
