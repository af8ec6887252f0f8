package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestLabelWriterFlush: an answer held for the simulation label is never
// sent early by a flush (its status would then be written twice and the
// label left out), while a progress stream (application/x-ndjson, POST
// /join and POST /peers) passes through: its first line reaches the
// client with its flush, before the handler is done.
func TestLabelWriterFlush(t *testing.T) {
	// A progress stream: a line, then a flush, as joinStream does.
	rec := httptest.NewRecorder()
	lw := &labelWriter{w: rec, h: rec.Header()}
	st := newLineWriter(lw)
	st.flush() // nothing written yet: nothing sent
	if rec.Flushed {
		t.Fatal("a flush before the first line sent the headers")
	}
	st.write(JoinEvent{Done: true})
	st.flush()
	if !lw.stream || !rec.Flushed || rec.Body.String() != "{\"done\":true}\n" || rec.Header().Get("Content-Type") != ContentTypeNDJSON {
		t.Fatalf("stream %v flushed %v body %q type %q: the line was held", lw.stream, rec.Flushed, rec.Body.String(), rec.Header().Get("Content-Type"))
	}

	// A held answer: a flush sends nothing.
	rec = httptest.NewRecorder()
	lw = &labelWriter{w: rec, h: rec.Header()}
	lw.Header().Set("Content-Type", "application/json")
	lw.WriteHeader(http.StatusAccepted)
	lw.Write([]byte(`{"a":1}`))
	if err := http.NewResponseController(lw).Flush(); err != nil {
		t.Fatal(err)
	}
	if lw.stream || rec.Flushed || rec.Body.Len() != 0 || lw.buf.String() != `{"a":1}` {
		t.Fatalf("stream %v flushed %v body %q held %q: a held answer was sent", lw.stream, rec.Flushed, rec.Body.String(), lw.buf.String())
	}
}
