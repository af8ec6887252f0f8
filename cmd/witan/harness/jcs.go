package harness

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Canon returns the RFC 8785 (JCS) canonical form of v. v is built from
// nil, bool, string, the Go integer types, json.Number holding an
// integer, []any, []string, map[string]any and json.RawMessage (decoded
// and canonicalized). The 30k protocol uses integers only (§3: no
// floating point), so a number with a fraction or an exponent is an
// error rather than a value JCS would have to format.
func Canon(v any) ([]byte, error) {
	return appendCanon(nil, v)
}

// MustCanon is Canon for values the harness builds itself.
func MustCanon(v any) []byte {
	b, err := Canon(v)
	if err != nil {
		panic("harness: " + err.Error())
	}
	return b
}

// CanonJSON canonicalizes JSON text.
func CanonJSON(raw []byte) ([]byte, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return Canon(v)
}

// decodeJSON decodes raw keeping numbers as json.Number.
func decodeJSON(raw []byte) (any, error) {
	var v any
	d := json.NewDecoder(bytesReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("jcs: trailing data")
	}
	return v, nil
}

func appendCanon(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendString(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("jcs: %q is not an integer", x)
		}
		return strconv.AppendInt(dst, n, 10), nil
	case json.RawMessage:
		d, err := decodeJSON(x)
		if err != nil {
			return nil, err
		}
		return appendCanon(dst, d)
	case []string:
		dst = append(dst, '[')
		for i, s := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendString(dst, s); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanon(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// RFC 8785 §3.2.3: members sorted by their names as arrays of
		// UTF-16 code units.
		sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendString(dst, k); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
			if dst, err = appendCanon(dst, x[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("jcs: cannot encode %T", v)
}

func lessUTF16(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// appendString writes s as RFC 8785 §3.2.2.2 (ECMAScript JSON.stringify)
// does: the two-character escapes for \b \t \n \f \r " and \, \u00xx
// (lower-case hex) for the other control characters, everything else as
// UTF-8.
func appendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("jcs: string is not UTF-8")
	}
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"'), nil
}
