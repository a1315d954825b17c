package api

import (
	_ "embed"
	"net/http"
)

// openAPI is the API's OpenAPI 3 description.
//
//go:embed openapi.json
var openAPI []byte

// handleOpenAPI answers GET /openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
	return nil
}
