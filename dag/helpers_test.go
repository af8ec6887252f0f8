package dag_test

import (
	"context"
	"sort"

	"golang.org/x/text/unicode/norm"
)

var ctx = context.Background()

func nfc(s string) string { return norm.NFC.String(s) }

func sortedKeys(k []string) []string { sort.Strings(k); return k }
