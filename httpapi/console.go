// The operator's web console: static files embedded in the binary and served
// under /console/. The page holds no secret and no data of its own: it signs
// every API call in the browser with the operator token the user types in,
// like any other client of this API.

package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed console
var consoleFiles embed.FS

// consoleCSP is the Content-Security-Policy of every console response: the
// page may load its own script and style only (no inline code, so a string an
// agent put in an approval can never run), talk to this origin only, never be
// framed, and submit no form anywhere.
const consoleCSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// consoleHandler serves the console's files under /console/, index.html at
// /console/ itself.
func consoleHandler() http.Handler {
	root, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic("httpapi: the embedded console directory is missing: " + err.Error())
	}
	files := http.StripPrefix("/console/", http.FileServerFS(root))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", consoleCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		files.ServeHTTP(w, r)
	})
}
