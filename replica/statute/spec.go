package statute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// Limits on what a decoder accepts from untrusted bytes. They are generous
// for statute text and small next to dag.MaxEnvelopeSize.
const (
	// MaxNIDLen bounds a nid in bytes.
	MaxNIDLen = 512
	// MaxKindLen bounds a kind in bytes.
	MaxKindLen = 64
	// MaxObjectSize bounds the canonical size of one Change or NodeSpec
	// decoded from the wire.
	MaxObjectSize = 16 << 20
)

// ErrSchema is wrapped (inside a *dag.ProtocolError with code schema) by
// every decoding error of this package.
var ErrSchema = errors.New("statute: malformed object")

func schemaErr(format string, args ...any) error {
	return &dag.ProtocolError{Code: dag.CodeSchema, Detail: "statute: " + fmt.Sprintf(format, args...), Err: ErrSchema}
}

// NodeSpec is a statute node as ops and resolutions carry it (30k §4):
// {nid, kind, heading?, text?, children?: [NodeSpec]}.
//
// Children distinguishes "absent" (nil) from "empty" (a non-nil, empty
// slice). In a replace op or a resolution an absent children list keeps the
// node's current children and an empty one removes them; see docs/statute.md.
// A missing heading or text is "", and is written only when not empty.
type NodeSpec struct {
	NID      string
	Kind     string
	Heading  string
	Text     string
	Children []NodeSpec
}

// HasChildren reports whether the spec carries a children list (possibly
// empty), as opposed to none.
func (s *NodeSpec) HasChildren() bool { return s.Children != nil }

type wireSpec struct {
	NID      json.RawMessage `json:"nid"`
	Kind     json.RawMessage `json:"kind"`
	Heading  json.RawMessage `json:"heading"`
	Text     json.RawMessage `json:"text"`
	Children json.RawMessage `json:"children"`
}

// UnmarshalJSON decodes a NodeSpec strictly: nid and kind are required, no
// unknown member is allowed, no member is null, and strings must pass
// CheckNID / CheckKind / CheckText. Callers decoding untrusted bytes should
// use DecodeNodeSpec, which first makes sure the bytes are canonical JSON
// under witan's profile.
func (s *NodeSpec) UnmarshalJSON(b []byte) error {
	return s.decode(b, 0)
}

func (s *NodeSpec) decode(b []byte, depth int) error {
	if depth > dag.MaxDepth {
		return schemaErr("node spec nested more than %d deep", dag.MaxDepth)
	}
	var w wireSpec
	if err := strictUnmarshal(b, &w); err != nil {
		return schemaErr("node spec: %v", err)
	}
	var err error
	*s = NodeSpec{}
	if s.NID, err = jsonString(w.NID, "nid"); err != nil {
		return err
	}
	if s.Kind, err = jsonString(w.Kind, "kind"); err != nil {
		return err
	}
	if w.Heading != nil {
		if s.Heading, err = jsonString(w.Heading, "heading"); err != nil {
			return err
		}
	}
	if w.Text != nil {
		if s.Text, err = jsonString(w.Text, "text"); err != nil {
			return err
		}
	}
	if err := s.checkFields(); err != nil {
		return err
	}
	if w.Children != nil {
		if w.Children[0] != '[' {
			return schemaErr("node %q: children is not an array", trunc(s.NID))
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(w.Children, &raws); err != nil {
			return schemaErr("node %q: children: %v", trunc(s.NID), err)
		}
		s.Children = make([]NodeSpec, len(raws))
		for i, raw := range raws {
			if err := s.Children[i].decode(raw, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *NodeSpec) checkFields() error {
	if err := CheckNID(s.NID); err != nil {
		return err
	}
	if err := CheckKind(s.Kind); err != nil {
		return schemaErr("node %q: %v", s.NID, err)
	}
	if err := CheckText(s.Heading); err != nil {
		return schemaErr("node %q: heading: %v", s.NID, err)
	}
	if err := CheckText(s.Text); err != nil {
		return schemaErr("node %q: text: %v", s.NID, err)
	}
	return nil
}

// Check validates every field of s and its children without decoding: use
// it on NodeSpecs built in code before they are hashed or applied.
func (s *NodeSpec) Check() error {
	stack := []*NodeSpec{s}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := n.checkFields(); err != nil {
			return err
		}
		for i := range n.Children {
			stack = append(stack, &n.Children[i])
		}
	}
	return nil
}

// MarshalJSON writes the spec with heading and text only when non-empty and
// children only when present. The output is canonical.
func (s NodeSpec) MarshalJSON() ([]byte, error) {
	return s.appendJSON(nil), nil
}

func (s *NodeSpec) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if s.Children != nil {
		dst = append(dst, `"children":[`...)
		for i := range s.Children {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = s.Children[i].appendJSON(dst)
		}
		dst = append(dst, "],"...)
	}
	if s.Heading != "" {
		dst = append(dst, `"heading":`...)
		dst = dag.AppendString(dst, s.Heading)
		dst = append(dst, ',')
	}
	dst = append(dst, `"kind":`...)
	dst = dag.AppendString(dst, s.Kind)
	dst = append(dst, `,"nid":`...)
	dst = dag.AppendString(dst, s.NID)
	if s.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = dag.AppendString(dst, s.Text)
	}
	return append(dst, '}')
}

// DecodeNodeSpec decodes a NodeSpec from untrusted bytes. The bytes must be
// JSON that dag.Canonicalize accepts (NFC, no duplicate keys, integers
// only); every error is a *dag.ProtocolError with code schema.
func DecodeNodeSpec(b []byte) (*NodeSpec, error) {
	canon, err := canonical(b)
	if err != nil {
		return nil, err
	}
	var s NodeSpec
	if err := s.decode(canon, 0); err != nil {
		return nil, err
	}
	return &s, nil
}

func canonical(b []byte) ([]byte, error) {
	if len(b) > MaxObjectSize {
		return nil, schemaErr("object is %d bytes, more than %d", len(b), MaxObjectSize)
	}
	return dag.Canonicalize(b)
}

// strictUnmarshal decodes one JSON value into v, refusing unknown fields and
// trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// CheckNID reports whether s is an acceptable nid: a path-like id starting
// with "/", at most MaxNIDLen bytes, valid UTF-8 in NFC, with no white space
// or control characters and without "[[" or "]]" (so that a nid can always
// be written inside a [[ref:]] marker). Errors have code schema.
func CheckNID(s string) error {
	if s == "" || s[0] != '/' {
		return schemaErr("nid %q does not start with /", trunc(s))
	}
	if len(s) > MaxNIDLen {
		return schemaErr("nid is %d bytes, more than %d", len(s), MaxNIDLen)
	}
	if !utf8.ValidString(s) {
		return schemaErr("nid %q is not UTF-8", trunc(s))
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return schemaErr("nid %q contains white space or a control character", trunc(s))
		}
	}
	if strings.Contains(s, "[[") || strings.Contains(s, "]]") {
		return schemaErr("nid %q contains [[ or ]]", trunc(s))
	}
	if !isNFC(s) {
		return schemaErr("nid %q is not NFC", trunc(s))
	}
	return nil
}

// CheckKind reports whether s is a plausible kind: 1 to MaxKindLen bytes of
// ASCII letters, digits, '-' and '_'. Whether the session's profile allows
// it is the structure check's business.
func CheckKind(s string) error {
	if s == "" || len(s) > MaxKindLen {
		return fmt.Errorf("kind %q is empty or longer than %d bytes", trunc(s), MaxKindLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("kind %q has a character other than [A-Za-z0-9_-]", trunc(s))
		}
	}
	return nil
}

// CheckText reports whether s is valid UTF-8 in NFC.
func CheckText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not UTF-8")
	}
	if !isNFC(s) {
		return errors.New("not NFC")
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
