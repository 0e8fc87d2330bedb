// Package deps pins module versions while the packages that use them are written.
package deps

import (
	_ "github.com/google/uuid"
	_ "github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/driver"
	_ "github.com/ncruces/go-sqlite3/embed"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "go.yaml.in/yaml/v3"
)
