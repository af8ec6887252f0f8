package httpapi

// This file reads POST /transactions's body on the hot path:
// one pass over the bytes finds the envelope and the attachments of the
// usual body, {"envelope":{...},"attachments":[...]}, where
// encoding/json's Decoder (reflection, a scanner per byte, a copy of each
// value) was a tenth of a submission's CPU. It only finds where the
// values are: whether they are JSON is for the envelope's decoder and the
// attachments' canonicalization to say. Any body it does not follow, and
// any body whose values then fail, is read again by readSubmission's
// generic path, so that every refusal keeps its wording.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/witan-dev/witan/dag"
)

// submission is a POST /transactions body once read: the envelope decoded
// (once: its canonical form checked and its id computed) and the
// attachments in their stored form, or the error of the first that is
// not an object (attErr, answered after the key.register rate check, as
// the attachments are read after it).
type submission struct {
	env    json.RawMessage
	signed dag.SignedEnvelope
	atts   [][]byte
	attErr error
}

// readSubmission reads and decodes a POST /transactions body. It does no
// more than readJSON, the envelope's checks and AttachmentObject did one
// after the other, and refuses with their errors.
func readSubmission(r *http.Request) (*submission, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return parseSubmission(b, true)
}

// parseSubmission is readSubmission once the body is read; fast false
// takes the generic path only (the tests hold the two paths together).
func parseSubmission(b []byte, fast bool) (*submission, error) {
	if env, atts, ok := splitTransaction(b); fast && ok {
		// The values found: taken if every one of them passes, else the
		// generic path says how they fail.
		if sub, err := buildSubmission(env, atts); err == nil && sub.attErr == nil {
			return sub, nil
		}
	}
	var tx Transaction
	if err := decodeJSON(b, &tx); err != nil {
		return nil, err
	}
	return buildSubmission(tx.Envelope, tx.Attachments)
}

// buildSubmission checks and decodes a submission's envelope and its
// attachments' wire forms; an attachment that fails is sub.attErr.
func buildSubmission[A ~[]byte](env []byte, atts []A) (*submission, error) {
	if len(env) == 0 || string(env) == "null" {
		return nil, problemf(dag.CodeSchema, "envelope is required")
	}
	if len(env) > dag.MaxEnvelopeSize {
		return nil, problemf(dag.CodeSchema, "envelope is larger than %d bytes", dag.MaxEnvelopeSize)
	}
	// An envelope that does not decode has no tx id to sign a receipt
	// for: a plain schema problem.
	se, err := dag.DecodeSigned(env)
	if err != nil {
		return nil, err
	}
	sub := &submission{env: env, signed: se, atts: make([][]byte, 0, len(atts))}
	for i, a := range atts {
		c, err := dag.AttachmentObject(json.RawMessage(a))
		if err != nil {
			sub.atts, sub.attErr = nil, problemf(dag.CodeSchema, "attachment %d: %v", i, err)
			break
		}
		sub.atts = append(sub.atts, c)
	}
	return sub, nil
}

// readBody reads a request body whole, in one allocation when the
// request says its length (MaxBytesReader still bounds it).
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= 1<<20 {
		buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead))
		_, err := buf.ReadFrom(r.Body)
		return buf.Bytes(), err
	}
	return io.ReadAll(r.Body)
}

// splitTransaction finds the values of a body that is one JSON object
// with the member "envelope" (an object) and optionally "attachments" (an
// array or null), each once, spelled exactly so, and nothing else. ok is false
// for anything else, which the generic path reads.
func splitTransaction(b []byte) (env []byte, atts [][]byte, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, false
	}
	seenAtts := false
	for i++; ; {
		i = skipSpace(b, i)
		name, j, ok := plainString(b, i)
		if !ok {
			return nil, nil, false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return nil, nil, false
		}
		i = skipSpace(b, i+1)
		switch {
		case string(name) == "envelope" && env == nil:
			if i >= len(b) || b[i] != '{' {
				return nil, nil, false
			}
			if j, ok = skipValue(b, i); !ok {
				return nil, nil, false
			}
			env, i = b[i:j], j
		case string(name) == "attachments" && !seenAtts:
			seenAtts = true
			if bytes.HasPrefix(b[i:], []byte("null")) { // as encoding/json writes a nil slice
				i += len("null")
				break
			}
			if i >= len(b) || b[i] != '[' {
				return nil, nil, false
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			for {
				j, ok := skipValue(b, i)
				if !ok {
					return nil, nil, false
				}
				atts = append(atts, b[i:j])
				i = skipSpace(b, j)
				if i < len(b) && b[i] == ',' {
					i = skipSpace(b, i+1)
					continue
				}
				if i < len(b) && b[i] == ']' {
					i++
					break
				}
				return nil, nil, false
			}
		default:
			return nil, nil, false
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' && skipSpace(b, i+1) == len(b) && env != nil {
			return env, atts, true
		}
		return nil, nil, false
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a string at b[i] without escapes; j is past its
// closing quote.
func plainString(b []byte, i int) (s []byte, j int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j = i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return b[i+1 : j], j + 1, true
		case '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// skipValue returns the end of the object, array or string that starts
// at b[i] (matching brackets and quotes only; a scalar is not taken).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) || (b[i] != '{' && b[i] != '[' && b[i] != '"') {
		return 0, false
	}
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return 0, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}
