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
	// The body read and the envelope decoded once (submit_body.go).
	sub, err := readSubmission(r)
	if err != nil {
		return err
	}
	env := sub.signed.Envelope
	// Anyone may register a key (it costs nothing to make one), so
	// key.register is the cheapest way to grow a session's state: each
	// client gets so many per hour.
	if env.Type == dag.TxKeyRegister && !s.keyRegisterAllowed(r) {
		return problemf(dag.CodeRateLimited, "too many key.register submissions from %s; try again later", clientOf(r))
	}
	if sub.attErr != nil {
		return sub.attErr
	}
	author, isOpinion, err := s.rateLimit(env) // opinions.go: node policy, HTTP clients only
	if err != nil {
		return err
	}
	rc, err := s.n.SubmitSigned(r.Context(), sub.env, sub.signed, sub.atts)
	if err != nil {
		return err
	}
	if isOpinion && rc.Status == "accepted" {
		s.lim.took(author)
	}
	b, err := rc.MarshalJSON()
	if err != nil {
		return err
	}
	if rc.Status == "accepted" {
		return s.writeReceipt(w, r, b)
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

// writeReceipt writes the answer to an accepted submission: what
// writeJSON(ReceiptAnswer{receipt, provisional}) writes, and the simulation
// label serveLabelled would add, written by hand (the receipt is canonical
// JSON already, with nothing for encoding/json to escape: ids, a key,
// numbers, no strings of its own).
func (s *Server) writeReceipt(w http.ResponseWriter, r *http.Request, receipt []byte) error {
	b := make([]byte, 0, len(receipt)+64)
	b = append(b, '{')
	if lw, ok := w.(*labelWriter); ok {
		// An answer without "session" or "space": labelled as
		// concernsSimulation says for such an answer.
		if s.concernsSimulation(r, nil) {
			b = append(b, `"simulation":true,`...)
		}
		lw.labelled = true
	}
	b = append(b, `"receipt":`...)
	b = append(b, receipt...)
	b = append(b, `,"finality":"`+replica.Provisional+`"}`+"\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}
