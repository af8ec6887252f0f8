package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Problem is an RFC 9457 problem details body with the 30k error code
// (§5: "Errors are RFC 9457 problem+json with a machine-readable code").
type Problem struct {
	Type   string   `json:"type"`
	Title  string   `json:"title"`
	Status int      `json:"status"`
	Detail string   `json:"detail,omitempty"`
	Code   dag.Code `json:"code"`
	// Errors lists every error when a request failed for several reasons.
	Errors []ProblemError `json:"errors,omitempty"`
}

// ProblemError is one error of a Problem, as in a receipt.
type ProblemError struct {
	Code   dag.Code `json:"code"`
	Detail string   `json:"detail,omitempty"`
}

// ContentTypeProblem is the media type of problem bodies.
const ContentTypeProblem = "application/problem+json"

// Codes for failures the 30k list does not name: a request that is not a
// protocol object at all. They are not protocol codes, so they are spelled
// in witan's own namespace.
const (
	CodeNotFound         dag.Code = "witan:not_found"
	CodeMethodNotAllowed dag.Code = "witan:method_not_allowed"
	CodeTooLarge         dag.Code = "witan:request_too_large"
	CodeInternal         dag.Code = "witan:internal"
)

// statusOf maps a code to its HTTP status.
func statusOf(c dag.Code) int {
	switch c {
	case CodeNotFound:
		return http.StatusNotFound
	case CodeHeld:
		return http.StatusConflict
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeHeadersTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case CodeForbidden:
		return http.StatusForbidden
	case CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case CodeInternal:
		return http.StatusInternalServerError
	case CodeNotImplemented:
		return http.StatusNotImplemented
	case CodeTooManyClients:
		return http.StatusServiceUnavailable
	case CodePeerUnreachable:
		return http.StatusBadGateway
	case dag.CodeSchema, dag.CodeBadSignature:
		return http.StatusBadRequest
	case dag.CodeRateLimited:
		return http.StatusTooManyRequests
	case dag.CodeNotAuthorized, dag.CodeObserverNotAllowed, dag.CodeGroupNotAuthorized:
		return http.StatusForbidden
	case dag.CodeRuleNotSupported:
		return http.StatusNotImplemented
	default:
		return http.StatusUnprocessableEntity
	}
}

// WriteProblem writes a problem+json response for code c.
func WriteProblem(w http.ResponseWriter, c dag.Code, detail string) {
	st := statusOf(c)
	p := Problem{Type: "about:blank", Title: http.StatusText(st), Status: st, Detail: PlainDetail(detail), Code: c}
	b, _ := json.Marshal(p)
	w.Header().Set("Content-Type", ContentTypeProblem)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(st)
	w.Write(b)
}

// WriteError writes err as a problem: its *dag.ProtocolError code if it
// has one, else an internal error whose detail is not leaked.
func WriteError(w http.ResponseWriter, err error) {
	var pe *dag.ProtocolError
	if errors.As(err, &pe) {
		WriteProblem(w, pe.Code, pe.Detail)
		return
	}
	if errors.Is(err, dag.ErrNotFound) {
		WriteProblem(w, CodeNotFound, strings.TrimSuffix(PlainDetail(err.Error()), ": not found")+": not found")
		return
	}
	WriteProblem(w, CodeInternal, "internal error")
}

// CodePeerUnreachable: POST /peers could not reach the peer.
const CodePeerUnreachable dag.Code = "witan:peer_unreachable"

// CodeNotImplemented marks an endpoint this node does not serve yet.
const CodeNotImplemented dag.Code = "witan:not_implemented"
