package replica

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// The node-local records are an on-disk format: a store written by one
// version must open with the next. These vectors pin their bytes. Run
// `go test ./replica -run TestLocalRecordVectors -update-records` to
// rewrite them from the code (then read the diff: a change breaks stores
// already written).
var updateRecords = flag.Bool("update-records", false, "rewrite testdata/local_records.json from the code")

type recordVector struct {
	Name        string   `json:"name"`
	Provisional bool     `json:"provisional"`
	Space       string   `json:"space"`
	ID          dag.ID   `json:"id"`
	Parents     []dag.ID `json:"parents"`
	Data        string   `json:"data"` // the exact bytes stored
}

func recordVectors(t *testing.T) []recordVector {
	t.Helper()
	// Fixed inputs, independent of other packages' test builders: the
	// records do not look inside the session's entries.
	session := dag.Sum([]byte("session")).String()
	entry := []byte(`{"a witan entry":"its exact bytes"}`)
	seed := make([]byte, 32)
	seed[0] = 9
	node, err := dag.SignerFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	// The first two checkpoints are signed as before the session was
	// part of the signed bytes (Legacy): a store holding them must still
	// open. The third is signed with it.
	legacy := true
	sign := func(size uint64, ids []dag.ID, ts time.Time) Checkpoint {
		c := Checkpoint{Space: session, Size: size, Root: MerkleRoot(ids), TS: ts, Node: node.Key(), Legacy: legacy}
		msg, err := c.SigningBytes()
		if err != nil {
			t.Fatal(err)
		}
		c.Sig = node.Sign(DomainCheckpoint, msg)
		return c
	}
	var out []recordVector
	add := func(name string, e dag.Entry, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recordVector{Name: name, Provisional: true, Space: e.Space, ID: e.ID, Parents: e.Parents, Data: string(e.Data)})
	}
	c1, err := checkpointEntry(sign(0, nil, time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)), 1, dag.ID{})
	add("first checkpoint, empty log", c1, err)
	c2, err := checkpointEntry(sign(2, []dag.ID{dag.Sum([]byte("one")), dag.Sum(entry)}, time.Date(2026, 9, 21, 0, 0, 1, 500, time.UTC)), 2, c1.ID)
	add("second checkpoint, after the first", c2, err)
	legacy = false
	c3, err := checkpointEntry(sign(2, []dag.ID{dag.Sum([]byte("one")), dag.Sum(entry)}, time.Date(2026, 9, 21, 0, 0, 2, 0, time.UTC)), 3, c2.ID)
	add("third checkpoint, its session signed", c3, err)
	h, err := heldEntry(session, dag.Sum(entry), entry)
	add("held entry", h, err)
	salt := bytes.Repeat([]byte{1}, house.SaltSize)
	change := dag.Sum(entry)
	dr, err := draftEntry(Draft{Session: session, Branch: "r-7f3a", Commitment: house.Commitment(salt, change), Change: change, Salt: salt, Objects: [][]byte{entry, []byte(`"a node"`)}})
	add("deposited draft", dr, err)
	return out
}

func TestLocalRecordVectors(t *testing.T) {
	path := filepath.Join("testdata", "local_records.json")
	got := recordVectors(t)
	if *updateRecords {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []recordVector
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d vectors, the code makes %d", len(want), len(got))
	}
	session := ""
	for i, w := range want {
		g := got[i]
		if w.Name != g.Name || w.Space != g.Space || w.ID != g.ID || w.Data != g.Data || len(w.Parents) != len(g.Parents) || len(w.Parents) == 1 && w.Parents[0] != g.Parents[0] {
			t.Errorf("vector %q: the code writes\n%s %s %v %s\nthe vector has\n%s %s %v %s", w.Name, g.Space, g.ID, g.Parents, g.Data, w.Space, w.ID, w.Parents, w.Data)
		}
		if !w.Provisional {
			t.Errorf("vector %q: ours, so provisional", w.Name)
		}
		// Every vector decodes (what a newer version must still read).
		e := dag.Entry{ID: w.ID, Space: w.Space, Parents: w.Parents, Data: []byte(w.Data)}
		if dag.Sum(e.Data) != e.ID {
			t.Errorf("vector %q: id is not the hash of the data", w.Name)
		}
		switch {
		case w.Space == DraftSpace:
			if _, err := decodeDraft(e); err != nil {
				t.Errorf("vector %q: %v", w.Name, err)
			}
		case len(w.Space) > len(LocalPrefix+"held/") && w.Space[:len(LocalPrefix+"held/")] == LocalPrefix+"held/":
			session = w.Space[len(LocalPrefix+"held/"):]
			if _, _, err := decodeHeld(session, e); err != nil {
				t.Errorf("vector %q: %v", w.Name, err)
			}
		default:
			session = w.Space[len(LocalPrefix+"checkpoints/"):]
			c, _, err := decodeCheckpoint(session, e)
			if err != nil {
				t.Errorf("vector %q: %v", w.Name, err)
				break
			}
			// As loadCheckpoints does: with the session signed, else a
			// legacy checkpoint.
			legacy := c
			legacy.Legacy = true
			if err := c.Verify(); err != nil && legacy.Verify() != nil {
				t.Errorf("vector %q: %v", w.Name, err)
			}
			if w.Name == "third checkpoint, its session signed" && legacy.Verify() == nil {
				t.Errorf("vector %q verifies without its session", w.Name)
			}
		}
	}
}
