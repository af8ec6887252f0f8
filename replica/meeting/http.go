package meeting

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// MaxBody is the largest request body the meeting API reads.
const MaxBody = 64 << 10

// Handler serves the meeting API under base (e.g. "/oth/v0"):
//
//	POST base/meetings                     start: {profile, locale, start}
//	GET  base/meetings/{id}                state of an open meeting
//	POST base/meetings/{id}/events         one Event
//	POST base/meetings/{id}/end            {at}: end it; answers the note
//	GET  base/meetings/{id}/note?at=       the note read at a time
//	GET  base/meetings/{id}/records?at=    records at their readable level
//	GET  base/meetings/{id}/artefact?level=&at=
//	POST base/meetings/{id}/publish        {space}: Outcomes to a memory space
//
// Answers never carry a label, a voice ID of the binding, or a statement
// time. Refusals are problem+json with a Code.
func Handler(s *Service, base string) http.Handler {
	mux := http.NewServeMux()
	h := &handler{s: s}
	mux.HandleFunc("POST "+base+"/meetings", h.wrap(h.start))
	mux.HandleFunc("GET "+base+"/meetings/{id}", h.wrap(h.state))
	mux.HandleFunc("POST "+base+"/meetings/{id}/events", h.wrap(h.event))
	mux.HandleFunc("POST "+base+"/meetings/{id}/end", h.wrap(h.end))
	mux.HandleFunc("GET "+base+"/meetings/{id}/note", h.wrap(h.note))
	mux.HandleFunc("GET "+base+"/meetings/{id}/records", h.wrap(h.records))
	mux.HandleFunc("GET "+base+"/meetings/{id}/artefact", h.wrap(h.artefact))
	mux.HandleFunc("POST "+base+"/meetings/{id}/publish", h.wrap(h.publish))
	mux.HandleFunc(base+"/meetings/", func(w http.ResponseWriter, r *http.Request) {
		WriteProblem(w, CodeNotFound, "no meeting endpoint at "+r.URL.Path)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		}
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

type handler struct{ s *Service }

func (h *handler) wrap(f func(w http.ResponseWriter, r *http.Request) (int, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st, v, err := f(w, r)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				WriteProblem(w, e.Code, e.Detail)
			} else {
				WriteProblem(w, CodeInternal, "internal error")
			}
			return
		}
		b, _ := json.Marshal(v)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(st)
		w.Write(append(b, '\n'))
	}
}

// Problem is the RFC 9457 body of a refusal.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   Code   `json:"code"`
}

func statusOf(c Code) int {
	switch c {
	case CodeNotFound, CodeForgotten:
		return http.StatusNotFound
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeEnded, CodeStillOpen:
		return http.StatusConflict
	case CodeTooMany:
		return http.StatusTooManyRequests
	case CodeNotPublished:
		return http.StatusNotImplemented
	case CodeBadRequest:
		return http.StatusBadRequest
	case CodeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusUnprocessableEntity
}

// WriteProblem writes a problem+json answer for c.
func WriteProblem(w http.ResponseWriter, c Code, detail string) {
	st := statusOf(c)
	b, _ := json.Marshal(Problem{Type: "about:blank", Title: http.StatusText(st), Status: st, Detail: detail, Code: c})
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(st)
	w.Write(b)
}

// decode reads one JSON value, refusing unknown fields and trailing data.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &Error{Code: CodeTooLarge, Detail: "the body is over " + strconv.Itoa(MaxBody) + " bytes"}
		}
		return &Error{Code: CodeBadRequest, Detail: "cannot read the body"}
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return &Error{Code: CodeBadRequest, Detail: "invalid JSON: " + err.Error()}
	}
	if d.More() {
		return &Error{Code: CodeBadRequest, Detail: "trailing data after the JSON value"}
	}
	return nil
}

func queryInt(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, &Error{Code: CodeBadRequest, Detail: name + " must be a non-negative integer"}
	}
	return n, nil
}

func (h *handler) id(r *http.Request) (ID, error) { return ParseID(r.PathValue("id")) }

func (h *handler) start(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var so StartOptions
	if err := decode(r, &so); err != nil {
		return 0, nil, err
	}
	id, err := h.s.Start(r.Context(), so)
	if err != nil {
		return 0, nil, err
	}
	st, err := h.s.State(r.Context(), id)
	return http.StatusCreated, st, err
}

// ClosedView is what GET /meetings/{id} answers for a meeting that ended.
type ClosedView struct {
	ID     string `json:"id"`
	Open   bool   `json:"open"`
	Date   string `json:"date"`
	Voices int    `json:"voices"`
}

func (h *handler) state(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := h.id(r)
	if err != nil {
		return 0, nil, err
	}
	st, err := h.s.State(r.Context(), id)
	if CodeOf(err) == CodeEnded {
		n, err := h.s.Note(r.Context(), id, 0)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, ClosedView{ID: id.String(), Date: n.Date, Voices: n.Voices}, nil
	}
	return http.StatusOK, st, err
}

// EventsAnswer is the answer to one event.
type EventsAnswer struct {
	Results []Result  `json:"results"`
	State   StateView `json:"state"`
}

func (h *handler) event(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := h.id(r)
	if err != nil {
		return 0, nil, err
	}
	var ev Event
	if err := decode(r, &ev); err != nil {
		return 0, nil, err
	}
	res, err := h.s.Step(r.Context(), id, ev)
	if err != nil {
		return 0, nil, err
	}
	a := EventsAnswer{Results: res}
	if a.State, err = h.s.State(r.Context(), id); CodeOf(err) == CodeEnded {
		a.State, err = StateView{ID: id.String(), Open: false, Voices: []VoiceView{}}, nil
	}
	return http.StatusOK, a, err
}

func (h *handler) end(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := h.id(r)
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		At int64 `json:"at,omitempty"`
	}
	if err := decode(r, &body); err != nil {
		return 0, nil, err
	}
	if err := h.s.End(r.Context(), id, body.At); err != nil {
		return 0, nil, err
	}
	n, err := h.s.Note(r.Context(), id, 0)
	return http.StatusOK, n, err
}

func (h *handler) note(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := h.id(r)
	if err != nil {
		return 0, nil, err
	}
	at, err := queryInt(r, "at")
	if err != nil {
		return 0, nil, err
	}
	n, err := h.s.Note(r.Context(), id, at)
	return http.StatusOK, n, err
}

func (h *handler) records(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := h.id(r)
	if err != nil {
		return 0, nil, err
	}
	at, err := queryInt(r, "at")
	if err != nil {
		return 0, nil, err
	}
	recs, err := h.s.Records(r.Context(), id, at)
	return http.StatusOK, map[string]any{"records": recs}, err
}

func (h *handler) artefact(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := h.id(r)
	if err != nil {
		return 0, nil, err
	}
	at, err := queryInt(r, "at")
	if err != nil {
		return 0, nil, err
	}
	l, err := queryInt(r, "level")
	if err != nil {
		return 0, nil, err
	}
	a, err := h.s.Artefact(r.Context(), id, int(l), at)
	return http.StatusOK, a, err
}

func (h *handler) publish(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := h.id(r)
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		Space string `json:"space"`
	}
	if err := decode(r, &body); err != nil {
		return 0, nil, err
	}
	p, err := h.s.PublishOutcomes(r.Context(), id, body.Space)
	return http.StatusCreated, p, err
}
