package httpload_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/httpapi/httpload"
)

// TestRun: every request is sent once, over the clients' connections,
// with its body; each gets a latency; an answer other than 200 stops the
// run with its status and body.
func TestRun(t *testing.T) {
	var got atomic.Int64
	seen := make([]atomic.Bool, 50)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/tx" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request line", http.StatusBadRequest)
			return
		}
		i, err := strconv.Atoi(string(body))
		if err != nil || i < 0 || i >= len(seen) || seen[i].Swap(true) {
			http.Error(w, "body "+string(body)+" twice or malformed", http.StatusConflict)
			return
		}
		got.Add(1)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	bodies := make([][]byte, len(seen))
	for i := range bodies {
		bodies[i] = []byte(strconv.Itoa(i))
	}
	cl, err := httpload.Dial(host, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lat, err := cl.Run(httpload.Posts(host, "/tx", bodies))
	if err != nil {
		t.Fatal(err)
	}
	if got.Load() != int64(len(bodies)) || len(lat) != len(bodies) {
		t.Fatalf("server answered %d, %d latencies, want %d", got.Load(), len(lat), len(bodies))
	}
	for i, l := range lat {
		if l <= 0 {
			t.Fatalf("request %d has no latency", i)
		}
	}
	if p := httpload.Percentile(lat, 99); p <= 0 || p < httpload.Percentile(lat, 50) {
		t.Fatalf("p99 %v ms, p50 %v ms", p, httpload.Percentile(lat, 50))
	}

	// A second run of the same bodies: the server refuses them.
	cl2, err := httpload.Dial(host, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	if _, err := cl2.Run(httpload.Posts(host, "/tx", bodies)); err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("run of refused requests: %v, want the 409 and its body", err)
	}
}

// TestTransactions: each request posts its envelope to /transactions as
// an httpapi.Transaction.
func TestTransactions(t *testing.T) {
	envs := [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)}
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var tx httpapi.Transaction
		if r.URL.Path != httpapi.Base+"/transactions" || json.NewDecoder(r.Body).Decode(&tx) != nil {
			http.Error(w, "not a transaction: "+r.URL.Path, http.StatusBadRequest)
			return
		}
		got = append(got, tx.Envelope)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	reqs, err := httpload.Transactions(host, envs)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := httpload.Dial(host, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Run(reqs); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != `{"a":1}` || string(got[1]) != `{"b":2}` {
		t.Fatalf("server got %q", got)
	}
}
