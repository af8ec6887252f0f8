package dag

// members calls fn for each top-level member of b, a JSON object that check
// has already validated, with the member's unescaped key and the raw bytes
// of its value. It stops at the first error fn returns. It is the fast,
// reflection-free way decoders of canonical objects read their fields.
func members(b []byte, fn func(key string, raw []byte) error) error {
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
		key, err := s.str()
		if err != nil {
			return err
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

// stringValue returns the unescaped value of raw, a validated JSON string,
// or ok=false if raw is not a string.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	s := scanner{b: raw, prof: profileRFC8785}
	v, err := s.str()
	return v, err == nil
}

// stringArray returns the strings of raw, a validated JSON array of
// strings, or ok=false if raw is anything else.
func stringArray(raw []byte) ([]string, bool) {
	if len(raw) < 2 || raw[0] != '[' {
		return nil, false
	}
	var out []string
	s := scanner{b: raw, prof: profileRFC8785, i: 1}
	for {
		s.ws()
		if s.i >= len(raw) {
			return nil, false
		}
		switch raw[s.i] {
		case ']':
			return out, true
		case ',':
			s.i++
			continue
		case '"':
			v, err := s.str()
			if err != nil {
				return nil, false
			}
			out = append(out, v)
		default:
			return nil, false
		}
	}
}
