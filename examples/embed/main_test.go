package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/witan-dev/witan/replica"
)

func TestEmbed(t *testing.T) {
	var out bytes.Buffer
	o, err := run(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	if o.Approve != 1 || o.Before != replica.Provisional || o.After != replica.FinalAdvisory || o.CheckpointSize != 5 || o.CheckpointVerify != nil || !o.StateHash.Valid() {
		t.Fatalf("outcome %+v\n%s", o, out.String())
	}
	if !strings.Contains(out.String(), "is now final_advisory") {
		t.Fatalf("output:\n%s", out.String())
	}
}
