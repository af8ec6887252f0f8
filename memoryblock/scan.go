package memoryblock

// Splitting canonical JSON without reflection. Every function here is
// called only on text the strict scanner of package dag has already
// accepted, so they walk structure and never judge validity.

// skipValue returns the index just past the JSON value that starts at i.
func skipValue(s []byte, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			j = skipString(s, j) - 1
			if depth == 0 {
				return j + 1
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return j // end of a scalar inside a container
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	return len(s)
}

// skipString returns the index just past the string whose opening quote is
// at i.
func skipString(s []byte, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// member is one member of a JSON object: its key as written (without the
// quotes, escapes not undone) and its value's text.
type member struct {
	rawKey []byte
	value  []byte
}

// objectMembers splits a JSON object into its members.
func objectMembers(s []byte) []member {
	var out []member
	i := 1 // past '{'
	for i < len(s) && s[i] != '}' {
		k := skipString(s, i)
		key := s[i+1 : k-1]
		v := k + 1 // past ':'
		e := skipValue(s, v)
		out = append(out, member{rawKey: key, value: s[v:e]})
		i = e
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	return out
}

// arrayElements splits a JSON array into its elements' texts.
func arrayElements(s []byte) [][]byte {
	var out [][]byte
	i := 1 // past '['
	for i < len(s) && s[i] != ']' {
		e := skipValue(s, i)
		out = append(out, s[i:e])
		i = e
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	return out
}
