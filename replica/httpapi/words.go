package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// internalPrefix matches the package prefixes witan's errors carry inside
// (errors are wrapped with their package prefix inside), at the start of a
// message or after another one's colon.
var internalPrefix = regexp.MustCompile(`(^|: )(?:replica|dag|house|badgerstore|httpapi|node|sync|statute|rules|sessions|memoryblock|memory|author|meeting|json): `)

// PlainDetail returns an error message in the user's words: without the
// Go package prefixes the library's errors carry inside, which name code,
// not anything the user sent. What a node says on the wire and what witan
// prints go through it.
func PlainDetail(s string) string {
	for {
		t := internalPrefix.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
}

// jsonDetail says why a body is not the JSON expected, in JSON's words
// (object, array, string, number), not Go's ("cannot unmarshal array into
// Go value of type httpapi.Transaction").
func jsonDetail(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := dag.JSONKind(te.Type.Kind())
		if te.Field == "" {
			return fmt.Sprintf("the body must be a JSON %s, not %s", want, article(te.Value))
		}
		return fmt.Sprintf("field %q must be a JSON %s, not %s", te.Field, want, article(te.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("the body is not valid JSON (at byte %d): %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	}
	if errors.Is(err, errUnexpectedEOF) {
		return "the body ends in the middle of a JSON value"
	}
	return PlainDetail(err.Error())
}

var errUnexpectedEOF = errors.New("unexpected EOF")

func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "string", "number", "bool":
		return "a " + v
	default:
		return v
	}
}
