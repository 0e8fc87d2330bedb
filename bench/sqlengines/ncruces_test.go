//go:build !mattn

package sqlengines

import _ "github.com/ncruces/go-sqlite3/driver"

func init() {
	engines = append([]engine{{"ncruces", "sqlite3", func(p string) string { return "file:" + p }}}, engines...)
}
