package sync_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	gosync "sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// cpLocal is a real synctest replica that also serves fixed checkpoint
// bytes (sync only carries them: replica/node makes and checks real
// ones) and records the cosignatures it keeps.
type cpLocal struct {
	*synctest.Replica
	mu   gosync.Mutex
	kept []string // peer, space, checkpoint, cosignature
}

func (l *cpLocal) CheckpointOf(_ context.Context, space string, from uint64) ([]byte, []byte, error) {
	switch {
	case space == "none":
		return nil, nil, nil
	case space == "broken":
		return nil, nil, errors.New("disk on fire")
	case from == 1:
		return []byte(`{"size":2}`), []byte(`{"first":1,"second":2}`), nil
	}
	return []byte(`{"size":2}`), nil, nil
}

func (l *cpLocal) KeepCosignature(_ context.Context, peer, space string, cp, cs []byte) error {
	if string(cs) == `{"sig":"bad"}` {
		return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "cosignature does not verify"}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept = append(l.kept, peer, space, string(cp), string(cs))
	return nil
}

// TestCheckpointProtocol (/witan/checkpoint/1 between real libp2p hosts
// on loopback): a checkpoint request answers the server's bytes, with
// the proof only when the request's from asks for it, none for a space
// without a checkpoint, witan:internal ("responder failed", nothing of
// the local failure) when the server fails; a cosignature is kept
// with the sender's peer id, or refused with the server's code. A node
// whose Local serves no checkpoints answers ErrNoCheckpoints. Malformed
// requests on raw streams are answered schema and charged: the fifth
// (over the budget of 4) cuts the peer off, whose next valid request is
// witan:refused.
func TestCheckpointProtocol(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true}
	srvLocal := &cpLocal{Replica: synctest.NewMem(synctest.Options{})}
	srv, err := ws.NewNode(ctx, srvLocal, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := ws.NewNode(ctx, synctest.NewMem(synctest.Options{}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := cli.Connect(ctx, srv.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	cp, proof, err := cli.PeerCheckpoint(ctx, srv.ID(), "s", 0)
	if err != nil || string(cp) != `{"size":2}` || proof != nil {
		t.Fatalf("from 0: %s %s %v", cp, proof, err)
	}
	cp, proof, err = cli.PeerCheckpoint(ctx, srv.ID(), "s", 1)
	if err != nil || string(cp) != `{"size":2}` || string(proof) != `{"first":1,"second":2}` {
		t.Fatalf("from 1: %s %s %v", cp, proof, err)
	}
	if cp, proof, err := cli.PeerCheckpoint(ctx, srv.ID(), "none", 0); err != nil || cp != nil || proof != nil {
		t.Fatalf("no checkpoint: %s %s %v", cp, proof, err)
	}
	var ce *ws.CheckpointError
	if _, _, err := cli.PeerCheckpoint(ctx, srv.ID(), "broken", 0); !errors.As(err, &ce) || ce.Code != "witan:internal" || ce.Detail != "responder failed" {
		t.Fatalf("server failure: %v", err)
	}
	if err := cli.SendCosignature(ctx, srv.ID(), "s", []byte(`{"size":2}`), []byte(`{"sig":"good"}`)); err != nil {
		t.Fatal(err)
	}
	if err := cli.SendCosignature(ctx, srv.ID(), "s", []byte(`{"size":2}`), []byte(`{"sig":"bad"}`)); !errors.As(err, &ce) || ce.Code != dag.CodeBadSignature {
		t.Fatalf("bad cosignature: %v", err)
	}
	srvLocal.mu.Lock()
	if want := []string{cli.ID().String(), "s", `{"size":2}`, `{"sig":"good"}`}; len(srvLocal.kept) != 4 || srvLocal.kept[0] != want[0] || srvLocal.kept[3] != want[3] {
		t.Fatalf("kept %q, want %q", srvLocal.kept, want)
	}
	srvLocal.mu.Unlock()
	if _, _, err := srv.PeerCheckpoint(ctx, cli.ID(), "s", 0); !errors.Is(err, ws.ErrNoCheckpoints) {
		t.Fatalf("a node that serves no checkpoints: %v", err)
	}

	raw := func(b []byte) ws.CheckpointAnswer {
		t.Helper()
		s, err := cli.Host().NewStream(ctx, srv.ID(), protocol.ID(ws.CheckpointProtocolID))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Write(b); err != nil {
			t.Fatal(err)
		}
		s.CloseWrite()
		body, err := readFrame(bufio.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		var ans ws.CheckpointAnswer
		if err := json.Unmarshal(body, &ans); err != nil {
			t.Fatal(err)
		}
		return ans
	}
	frame := func(body string) []byte { return append(binary.AppendUvarint(nil, uint64(len(body))), body...) }
	for i, b := range [][]byte{
		{0x81, 0x00, '{'},
		frame(`{"kind":"checkpoint","space":"s","at":1}`),
		frame(`{"kind":"witness","space":"s"}`),
		frame(`{"kind":"checkpoint","space":"s","cosignature":{}}`),
		frame(`{"kind":"mystery","space":"s"}`),
	} {
		if ans := raw(b); ans.Error == nil || ans.Error.Code != dag.CodeSchema {
			t.Fatalf("malformed request %d: %+v", i, ans)
		}
	}
	if banned, _ := srv.Engine().Banned(cli.ID().String()); !banned {
		t.Fatal("five malformed requests: the peer is not cut off")
	}
	if ans := raw(frame(`{"kind":"checkpoint","space":"s"}`)); ans.Error == nil || ans.Error.Code != "witan:refused" {
		t.Fatalf("a request from a peer cut off: %+v", ans)
	}
}
