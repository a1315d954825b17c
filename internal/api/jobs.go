package api

// jobRoutes registers /api/jobs.
func (s *Server) jobRoutes(handle func(string, handlerFunc)) {}
