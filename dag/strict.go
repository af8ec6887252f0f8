package dag

// This file is the strict decoding that every body decoder of witan
// shares (the House's bodies, the opinion layer's): canonical-profile
// JSON whose member names must equal a field's json tag exactly.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// DecodeStrict decodes the canonical-profile JSON b into v, refusing
// unknown members and members whose names differ from a field's json tag
// only by case (encoding/json alone matches names case-insensitively;
// witan's bodies are case-sensitive, so the names are checked first).
// Bytes outside the canonical profile fail as Canonicalize does. The error
// says what is wrong; callers wrap it in their own schema problem, and
// ErrorDetail gives its text without a code.
func DecodeStrict(b []byte, v any) error {
	canon, err := Canonicalize(b)
	if err != nil {
		return err
	}
	if err := exactKeys(canon, reflect.TypeOf(v), 0); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// JSONKind names the Go kind k as JSON does (object, array, string,
// boolean, number), for saying what a json.UnmarshalTypeError wanted in
// JSON's words rather than Go's: a kind JSON has no name for is "value of
// another kind".
func JSONKind(k reflect.Kind) string {
	switch k {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	default:
		return "value of another kind"
	}
}

// ErrorDetail is the text of err for a problem's detail: a ProtocolError's
// Detail (without its code), else err's message.
func ErrorDetail(err error) string {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Detail
	}
	return err.Error()
}

// Trunc shortens s to at most 64 bytes, cut on a rune boundary and marked
// with "…", so that a detail quoting untrusted text stays short.
func Trunc(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 64
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

var rawType = reflect.TypeOf(json.RawMessage(nil))

// exactKeys checks that every object member in b names a field of t by its
// exact json tag, recursively.
func exactKeys(b []byte, t reflect.Type, depth int) error {
	if depth > MaxDepth {
		return errors.New("nested too deep")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawType || len(b) == 0 || b[0] == 'n' {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		for k, raw := range m {
			f, ok := fieldByTag(t, k)
			if !ok {
				return fmt.Errorf("unknown member %q", Trunc(k))
			}
			if err := exactKeys(raw, f.Type, depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		var a []json.RawMessage
		if err := json.Unmarshal(b, &a); err != nil {
			return err
		}
		for _, raw := range a {
			if err := exactKeys(raw, t.Elem(), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name && tag != "-" && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
