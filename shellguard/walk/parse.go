package walk

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// parsers holds bash parsers for reuse; a *syntax.Parser is not safe for
// concurrent use, so each Walk takes its own.
var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// parse parses src as bash. It never retries in another dialect: text bash
// rejects is text bash would not run.
func (w *walker) parse(src string) (*syntax.File, error) {
	if w.parser == nil {
		w.parser = parsers.Get().(*syntax.Parser)
	}
	return w.parser.Parse(strings.NewReader(src), "")
}

func (w *walker) release() {
	if w.parser != nil {
		parsers.Put(w.parser)
		w.parser = nil
	}
}
