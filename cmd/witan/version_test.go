package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// witan version prints the module version and VCS revision from the build
// information, the Go version and the store format.
func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/witan-dev/witan", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "3ba0dfc"}, {Key: "vcs.modified", Value: "true"}}}
	v := buildVersion(func() (*debug.BuildInfo, bool) { return bi, true })
	if v.Version != "v0.1.0" || v.Revision != "3ba0dfc" || !v.Modified || v.Go != runtime.Version() || v.StoreFormat != storeFormat {
		t.Fatalf("%+v", v)
	}
	bi.Main.Version = "(devel)"
	if v := buildVersion(func() (*debug.BuildInfo, bool) { return bi, true }); v.Version != "devel" {
		t.Fatalf("(devel) module: %q", v.Version)
	}
	if v := buildVersion(func() (*debug.BuildInfo, bool) { return nil, false }); v.Revision != "" || v.Version != "devel" {
		t.Fatalf("no build info: %+v", v)
	}
	out, _, code := run(context.Background(), "", "version")
	if code != 0 || !strings.Contains(out, "go            "+runtime.Version()) || !strings.Contains(out, "store format  "+storeFormat) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// Every command's -h goes to stdout, exits 0, and says what the command is
// for with one example; a mistake still prints to stderr and exits 2.
func TestEveryCommandHelp(t *testing.T) {
	m := &Main{}
	for _, c := range m.commands() {
		args := []string{c.name, "-h"}
		if c.name == "meeting" {
			args = []string{"meeting", "replay", "-h"}
		}
		if c.name == "memory" {
			args = []string{"memory", "get", "-h"}
		}
		out, errOut, code := run(context.Background(), "", args...)
		if code != 0 || errOut != "" {
			t.Errorf("%s -h: exit %d, stderr %q", c.name, code, errOut)
		}
		if !strings.Contains(out, "Example:\n  witan "+c.name) || !strings.Contains(out, upperFirst(c.summary)) {
			t.Errorf("%s -h: no purpose or example:\n%s", c.name, out)
		}
		if c.name != "up" && c.name != "keygen" && c.name != "bench" && c.name != "meeting" && c.name != "version" && c.name != "memory" &&
			c.name != "verify-extract" && // offline: it talks to no node
			c.name != "relay" && // a relay, not a client of a node
			!strings.Contains(out, "$WITAN_NODE") {
			t.Errorf("%s -h: no -node flag naming $WITAN_NODE:\n%s", c.name, out)
		}
	}
	// A bad flag: the mistake and where the flags are, not the whole help.
	if _, errOut, code := run(context.Background(), "", "heads", "-bogus"); code != exitUsage || errOut != "witan heads: unknown flag -bogus\nRun \"witan heads -h\" for its flags.\n" {
		t.Fatalf("bad flag: exit %d %q", code, errOut)
	}
	if out, _, code := run(context.Background(), "", "-h"); code != 0 || !strings.Contains(out, "version") {
		t.Fatalf("witan -h: exit %d\n%s", code, out)
	}
}
