package httpapi

// This file is the one write endpoint of 30k §5, POST /transactions.

import (
	"encoding/json"
	"net/http"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// Transaction is POST /transactions's body: {envelope, attachments}.
// Attachments are the objects the envelope names (JSON objects, hashed
// in their canonical form).
type Transaction struct {
	Envelope    json.RawMessage   `json:"envelope"`
	Attachments []json.RawMessage `json:"attachments"`
}

// ReceiptAnswer is POST /transactions's answer for an accepted envelope.
// The signed receipt is kept whole under "receipt", so that labels beside
// it never enter what the node signed.
type ReceiptAnswer struct {
	Receipt  json.RawMessage  `json:"receipt"`
	Finality replica.Finality `json:"finality"`
}

// RejectionProblem is the problem body of a rejected, well-formed
// submission: the problem with the receipt's first code, and the signed
// rejection receipt, evidence the node cannot later deny (D39).
type RejectionProblem struct {
	Problem
	Receipt  json.RawMessage  `json:"receipt"`
	Finality replica.Finality `json:"finality"`
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) error {
	var tx Transaction
	if err := readJSON(r, &tx); err != nil {
		return err
	}
	if len(tx.Envelope) == 0 || string(tx.Envelope) == "null" {
		return problemf(dag.CodeSchema, "envelope is required")
	}
	if len(tx.Envelope) > dag.MaxEnvelopeSize {
		return problemf(dag.CodeSchema, "envelope is larger than %d bytes", dag.MaxEnvelopeSize)
	}
	// An envelope that does not decode has no tx id to sign a receipt
	// for: a plain schema problem.
	env, _, _, err := dag.DecodeEnvelope(tx.Envelope)
	if err != nil {
		return err
	}
	// Anyone may register a key (it costs nothing to make one), so
	// key.register is the cheapest way to grow a session's state: each
	// client gets so many per hour.
	if env.Type == dag.TxKeyRegister && !s.keyRegisterAllowed(r) {
		return problemf(dag.CodeRateLimited, "too many key.register submissions from %s; try again later", clientOf(r))
	}
	atts := make([][]byte, 0, len(tx.Attachments))
	for i, a := range tx.Attachments {
		c, err := AttachmentObject(a)
		if err != nil {
			return problemf(dag.CodeSchema, "attachment %d: %v", i, err)
		}
		atts = append(atts, c)
	}
	author, isOpinion, err := s.rateLimit(tx.Envelope) // opinions.go: node policy, HTTP clients only
	if err != nil {
		return err
	}
	rc, err := s.n.Submit(r.Context(), tx.Envelope, atts)
	if err != nil {
		return err
	}
	if isOpinion && rc.Status == "accepted" {
		s.lim.took(author)
	}
	b, err := json.Marshal(rc)
	if err != nil {
		return err
	}
	if rc.Status == "accepted" {
		return writeJSON(w, ReceiptAnswer{Receipt: b, Finality: replica.Provisional})
	}
	code := dag.CodeSchema
	detail := "rejected"
	if len(rc.Errors) > 0 {
		code, detail = rc.Errors[0].Code, rc.Errors[0].Detail
	}
	st := statusOf(code)
	p := RejectionProblem{Problem: Problem{Type: "about:blank", Title: http.StatusText(st), Status: st, Detail: PlainDetail(detail), Code: code},
		Receipt: b, Finality: replica.Provisional}
	for _, e := range rc.Errors {
		p.Errors = append(p.Errors, ProblemError{Code: e.Code, Detail: PlainDetail(e.Detail)})
	}
	pb, err := json.Marshal(p)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", ContentTypeProblem)
	w.WriteHeader(st)
	_, err = w.Write(append(pb, '\n'))
	return err
}
