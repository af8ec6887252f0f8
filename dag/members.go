package dag

// members calls fn for each top-level member of b, a JSON object that check
// has already validated, with the member's unescaped key and the raw bytes
// of its value. It stops at the first error fn returns. It is the fast,
// reflection-free way decoders of canonical objects read their fields.
func members(b []byte, fn func(key, raw []byte) error) error {
	s := scanner{b: b, prof: profileRFC8785, canon: true}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return schemaErr("not a JSON object")
	}
	s.i++
	for {
		s.ws()
		if s.i < len(b) && b[s.i] == '}' {
			return nil
		}
		if s.i < len(b) && b[s.i] == ',' {
			s.i++
			s.ws()
		}
		if s.i >= len(b) || b[s.i] != '"' {
			return schemaErr("malformed object")
		}
		key, escaped, err := s.strBytes()
		if err != nil {
			return err
		}
		if escaped { // key aliases the scanner's scratch buffer
			key = append([]byte(nil), key...)
		}
		s.ws()
		s.i++ // ':'
		s.ws()
		start := s.i
		if err := s.skipValue(); err != nil {
			return err
		}
		if err := fn(key, b[start:s.i]); err != nil {
			return err
		}
	}
}

// skipValue moves past one already-validated JSON value.
func (s *scanner) skipValue() error {
	depth := 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++ // closing quote
		case c == '{' || c == '[':
			depth++
			s.i++
			continue
		case c == '}' || c == ']':
			depth--
			s.i++
		default: // number, literal, or a delimiter inside a container
			if depth == 0 {
				for s.i < len(s.b) && !isDelim(s.b[s.i]) {
					s.i++
				}
				return nil
			}
			s.i++
			continue
		}
		if depth == 0 {
			return nil
		}
	}
	return schemaErr("unterminated value")
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// stringBytes returns the unescaped value of raw, a validated JSON string
// (a slice of raw when it has no escape), or ok=false if raw is not a string.
func stringBytes(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	s := scanner{b: raw, prof: profileRFC8785}
	v, escaped, err := s.strBytes()
	if err != nil || s.i != len(raw) {
		return nil, false
	}
	if escaped {
		v = append([]byte(nil), v...)
	}
	return v, true
}
