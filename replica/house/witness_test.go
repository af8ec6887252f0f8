package house

import (
	"testing"
	"time"
)

func TestUnixSeconds(t *testing.T) {
	for _, ts := range []string{"2026-09-21T12:00:00Z", "2024-02-29T23:59:59Z", "1970-01-01T00:00:00Z", "2026-09-21T12:00:00.5Z", "2026-09-21T12:00:00+00:00"} {
		want, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := unixSeconds(ts)
		if !ok || got != want.Unix() {
			t.Errorf("%s: %d %v, want %d", ts, got, ok, want.Unix())
		}
	}
	for _, ts := range []string{"", "2026-13-01T00:00:00Z", "2026-09-21 12:00:00Z", "yesterday"} {
		if _, ok := unixSeconds(ts); ok {
			t.Errorf("%q read as a time", ts)
		}
	}
}
