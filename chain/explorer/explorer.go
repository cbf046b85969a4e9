// Package explorer owns the node's web explorer: a single-page application
// embedded in the binary (no CDN, no build step) that cowboyd serves at
// /explorer. The page reads only the node's public HTTP API (docs/API.md)
// and follows its Server-Sent Events stream, so everything it shows can be
// checked against the API, and it works the same against any node.
package explorer

import (
	"embed"
	"io/fs"
	"net/http"
)

// Prefix is the URL path the explorer is served under.
const Prefix = "/explorer"

//go:embed assets
var assets embed.FS

// Handler serves the explorer's assets under Prefix. Unknown paths under the
// prefix get index.html, so a reloaded deep link still opens the page.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		// The embed directive guarantees the directory exists.
		panic(err)
	}
	files := http.FileServer(http.FS(sub))
	return http.StripPrefix(Prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "" || p == "/" {
			serveIndex(w, r, sub)
			return
		}
		if _, err := fs.Stat(sub, p[1:]); err != nil {
			serveIndex(w, r, sub)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
}

func serveIndex(w http.ResponseWriter, r *http.Request, sub fs.FS) {
	b, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		http.Error(w, "explorer assets missing", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	// The page loads only its own scripts and talks only to this node.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'")
	_, _ = w.Write(b)
}
