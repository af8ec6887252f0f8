package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	mb "github.com/witan-dev/witan/memoryblock"
)

func TestAgents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var out bytes.Buffer
	o, err := run(ctx, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := outcome{Converged: true, AdaSeesEvidence: false, BoSeesEvidence: true, Confidence: false, AncestryDepth: 1, Orphan: mb.CodeBlockMissingParent}
	if *o != want {
		t.Fatalf("outcome %+v, want %+v\n%s", *o, want, out.String())
	}
}
