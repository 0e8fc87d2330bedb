//go:build mattn

package sqlengines

import _ "github.com/mattn/go-sqlite3"

func init() {
	engines = append([]engine{{"mattn", "sqlite3", func(p string) string { return "file:" + p }}}, engines...)
}
