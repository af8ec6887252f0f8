// Package httpload is a light HTTP load generator for benchmarks of a
// node's API: clients, each on its own keep-alive connection, send
// requests made in advance and time each answer. It is kept light because
// it shares the machine with the node it measures: the requests are whole
// HTTP/1.1 messages built before the clock starts, and answers are read
// with http.ReadResponse (no http.Client, whose transport costs two
// goroutines and channel hops per request).
package httpload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/witan-dev/witan/replica/httpapi"
)

// Posts returns an HTTP/1.1 POST request of each body to path on host
// (host:port), as JSON.
func Posts(host, path string, bodies [][]byte) [][]byte {
	reqs := make([][]byte, len(bodies))
	for i, body := range bodies {
		reqs[i] = append(fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			path, host, len(body)), body...)
	}
	return reqs
}

// Transactions returns a POST /transactions request of each envelope
// (an httpapi.Transaction without attachments) to the API on host.
func Transactions(host string, envelopes [][]byte) ([][]byte, error) {
	bodies := make([][]byte, len(envelopes))
	for i, env := range envelopes {
		b, err := json.Marshal(httpapi.Transaction{Envelope: env})
		if err != nil {
			return nil, err
		}
		bodies[i] = b
	}
	return Posts(host, httpapi.Base+"/transactions", bodies), nil
}

// Clients holds the connections of a load run, dialled in advance.
type Clients struct {
	conns []net.Conn
}

// Dial opens n connections to host.
func Dial(host string, n int) (*Clients, error) {
	c := &Clients{}
	for range n {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.conns = append(c.conns, conn)
	}
	return c, nil
}

// Close closes the connections.
func (c *Clients) Close() {
	for _, conn := range c.conns {
		conn.Close()
	}
}

// Run sends every request once, each taken in order by whichever client
// is free, and returns each one's latency (by request). It stops at the
// first answer that is not 200 OK, or the first network error, and
// returns it.
func (c *Clients) Run(reqs [][]byte) ([]time.Duration, error) {
	lat := make([]time.Duration, len(reqs))
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for _, conn := range c.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReader(conn)
			for failed.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(reqs) {
					return
				}
				t0 := time.Now()
				if _, err := conn.Write(reqs[i]); err != nil {
					failed.CompareAndSwap(nil, err.Error())
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					failed.CompareAndSwap(nil, err.Error())
					return
				}
				msg, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if err != nil || resp.StatusCode != http.StatusOK {
					failed.CompareAndSwap(nil, fmt.Sprint(resp.Status, " ", string(msg), " ", err))
					return
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		return lat, fmt.Errorf("httpload: %s", f)
	}
	return lat, nil
}

// Percentile returns the p-th percentile (0-100) of lat, in milliseconds
// (lat is sorted in place).
func Percentile(lat []time.Duration, p int) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return float64(lat[min(len(lat)-1, len(lat)*p/100)].Microseconds()) / 1000
}
