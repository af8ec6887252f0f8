package dag

// This file is the wire form of an attachment (POST /transactions, GET
// /log): objects are JSON objects or arrays named by the hash of their
// canonical form, or plain-text documents (a rule's text_ref, evidence)
// named by the hash of their raw bytes (open point 1,
// docs/wire-format.md). A plain-text document travels as a JSON string
// whose value is the document.

import (
	"encoding/json"
	"unicode/utf8"
)

// IsText reports whether a stored object is a plain-text document rather
// than a canonical JSON object or array.
func IsText(obj []byte) bool {
	return len(obj) == 0 || (obj[0] != '{' && obj[0] != '[') || !IsCanonical(obj)
}

// AttachmentWire returns an object's wire form: the object itself, or a
// plain-text document as a JSON string. It fails for a document that is
// not UTF-8 text.
func AttachmentWire(obj []byte) (json.RawMessage, error) {
	if !IsText(obj) {
		return obj, nil
	}
	if !utf8.Valid(obj) {
		return nil, Errorf(CodeSchema, "dag: a plain-text object must be UTF-8")
	}
	return json.Marshal(string(obj))
}

// AttachmentObject returns the object a wire attachment carries: a JSON
// string's value as raw bytes (a plain-text document), else the canonical
// form of the JSON value.
func AttachmentObject(raw json.RawMessage) ([]byte, error) {
	for len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\n' || raw[0] == '\t' || raw[0] == '\r') {
		raw = raw[1:]
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, Errorf(CodeSchema, "dag: attachment: %v", err)
		}
		if s == "" {
			return nil, Errorf(CodeSchema, "dag: attachment: an empty document")
		}
		return []byte(s), nil
	}
	return Canonicalize(raw)
}
