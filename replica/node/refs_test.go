package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// Refs, which sync uses to send each entry with the objects it needs: a
// group.update names its group object, which the node holds and sends; a
// ballot names entries only, so even a ballot whose body spells that
// object's id gets none (its type alone answers); a type that may name
// objects (mr.determine) with the same body gets the object; and an
// envelope not in canonical form is decoded and answered the same.
func TestRefs(t *testing.T) {
	ctx := context.Background()
	n := openNode(t)
	b := ht.New(ht.Options{Simulation: true})
	submit(t, n, b.Create)
	g := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), b.Create.ID)
	submit(t, n, g)
	up := b.GroupUpdate(ht.Member(0), "roster", ht.Members(0, 11), ht.Members(0, 1), g.ID)
	submit(t, n, up)
	if len(up.Attach) != 1 {
		t.Fatalf("group.update carries %d objects, want its group object", len(up.Attach))
	}
	obj := dag.Sum(up.Attach[0])
	space := b.Session.String()
	body := json.RawMessage(`{"choice":"approve","mr":"` + obj.String() + `"}`)
	ballot := b.Sign(ht.Member(1), dag.TxBallotCast, body, []dag.ID{up.ID})
	det := b.Sign(ht.Member(1), dag.TxMRDetermine, body, []dag.ID{up.ID})
	spaced := append([]byte("{ "), up.Bytes[1:]...) // valid JSON, not canonical
	for _, c := range []struct {
		what string
		data []byte
		want []dag.ID
	}{
		{"group.update", up.Bytes, []dag.ID{obj}},
		{"group.update, not canonical", spaced, []dag.ID{obj}},
		{"ballot naming the object", ballot.Bytes, nil},
		{"mr.determine naming the object", det.Bytes, []dag.ID{obj}},
	} {
		got, err := n.Refs(ctx, dag.Entry{Space: space, Data: c.data})
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: Refs = %v, %v; want %v", c.what, got, err, c.want)
		}
	}
	if bytes.Equal(spaced, up.Bytes) {
		t.Fatal("the spaced copy is the envelope")
	}
}
