package api

// sessionRoutes registers /api/sessions.
func (s *Server) sessionRoutes(handle func(string, handlerFunc)) {}
