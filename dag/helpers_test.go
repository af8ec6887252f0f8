package dag_test

import (
	"sort"

	"golang.org/x/text/unicode/norm"
)

func nfc(s string) string { return norm.NFC.String(s) }

func sortedKeys(k []string) []string { sort.Strings(k); return k }
