package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/extract"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// BenchmarkMRExtractS11: GET /extract/{mr} of an MR with S11's 11,000
// voters (one ballot each, all checkpointed; a log of ~11,000 entries, so
// inclusion paths of ~14 hashes), then VerifyMRExtract of it offline.
// Reports the extract's size and bytes per entry.
func BenchmarkMRExtractS11(b *testing.B) {
	const voters = 11000
	n := newNode(b)
	ballots, mr := benchBallotsWith(b, n, voters, ht.Options{Simulation: true})
	for _, tx := range ballots {
		if _, err := n.node.Submit(context.Background(), tx.Bytes, nil); err != nil {
			b.Fatal(err)
		}
	}
	space := ballots[0].Env.Session.String()
	if _, err := n.node.Replica().Checkpoint(context.Background(), dag.MustParseID(space)); err != nil {
		b.Fatal(err)
	}
	var body []byte
	b.Run("serve", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			resp, err := http.Get(n.srv.URL + httpapi.Base + "/extract/" + mr.String())
			if err != nil {
				b.Fatal(err)
			}
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("%d %v %.200s", resp.StatusCode, err, body)
			}
		}
		b.ReportMetric(float64(len(body))/1e6, "MB/extract")
		b.ReportMetric(float64(len(body))/float64(voters+1), "bytes/entry")
	})
	b.Run("verify", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x, _, err := extract.VerifyMR(body, dag.Key{}, nil)
			if err != nil || x.Tally.Tally.Ballots != voters {
				b.Fatalf("%v", err)
			}
		}
	})
}
