package fakellm

import "net/http"

// serveExtra answers the endpoints beside the model calls that some
// servers have (Ollama's /api/show); false when r is not one of them.
func (s *Server) serveExtra(w http.ResponseWriter, r *http.Request) bool {
	return false
}
