package api

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed web
var webFiles embed.FS

// pageFiles are the web page's files, at the root.
var pageFiles, _ = fs.Sub(webFiles, "web")

// contentSecurityPolicy keeps the page to its own files: no inline script
// or style, no other origin, no frames.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// isPagePath reports whether path is one of the page's files.
func isPagePath(path string) bool {
	if path == "/" {
		return true
	}
	if len(path) < 2 || path[0] != '/' {
		return false
	}
	f, err := fs.Stat(pageFiles, path[1:])
	return err == nil && !f.IsDir()
}

// pageRoutes serves the web chat page at / and its files by name.
func (s *Server) pageRoutes(mux *http.ServeMux) {
	files := http.FileServerFS(pageFiles)
	serve := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}
	mux.HandleFunc("GET /{$}", serve)
	_ = fs.WalkDir(pageFiles, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path != "index.html" {
			mux.HandleFunc("GET /"+path, serve)
		}
		return nil
	})
}
