package httpapi

// Patterns lists every path the server routes (for the D54 walk test).
func Patterns(s *Server) []string { return append([]string(nil), s.patterns...) }
