package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The newcomer's errors testdata/errors.txt cannot show: witan --version
// is witan version; witan up -key with no such file says so before it
// makes the data directory; a key file others can read is refused with
// the advice for a key (chmod 600 it), and only then.
func TestNewcomerErrors(t *testing.T) {
	ctx := context.Background()
	want, _, code := run(ctx, "", "version")
	for _, flag := range []string{"--version", "-version"} {
		if out, errOut, c := run(ctx, "", flag); c != code || out != want || code != 0 {
			t.Fatalf("witan %s: exit %d\n%s%s\nwant witan version's:\n%s", flag, c, out, errOut, want)
		}
	}

	dir := t.TempDir()
	data := filepath.Join(dir, "witan-data")
	nosuch := filepath.Join(dir, "nosuch.key")
	_, errOut, c := run(ctx, "", "up", "-data", data, "-http", "127.0.0.1:0", "-no-p2p", "-key", nosuch)
	if c != exitFailure || errOut != "witan: -key: no key file "+nosuch+": make one with \"witan keygen -out "+nosuch+"\", or name another with -key FILE\n" {
		t.Fatalf("up -key nosuch.key: exit %d %q", c, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("up -key nosuch.key made its data directory: %v", err)
	}

	key := filepath.Join(dir, "me.key")
	if _, errOut, c := run(ctx, "", "keygen", "-out", key); c != 0 {
		t.Fatalf("keygen: %s", errOut)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, c = run(ctx, "", "submit", "-key", key, "-node", "http://127.0.0.1:1", filepath.Join("testdata", "nosuch.json"))
	if c != exitFailure || !strings.Contains(errOut, "no such file") {
		t.Fatalf("submit of a missing draft: exit %d %q", c, errOut)
	}
	draft := filepath.Join(dir, "draft.json")
	if err := os.WriteFile(draft, []byte(`{"type":"ballot.cast","session":"sha256:0000000000000000000000000000000000000000000000000000000000000000","parents":[],"body":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, c = run(ctx, "", "submit", "-key", key, "-node", "http://127.0.0.1:1", draft)
	if c != exitFailure || errOut != "witan: the key file "+key+" is readable by others (mode 644); chmod 600 "+key+"\n" {
		t.Fatalf("a key others can read: exit %d %q", c, errOut)
	}

	_, errOut, c = run(ctx, "", "memory", "list", "notes")
	if c != exitUsage || !strings.HasPrefix(errOut, "witan memory: unknown verb \"list\"\n\nUsage: witan memory VERB") {
		t.Fatalf("memory list: exit %d %q", c, errOut)
	}
}
