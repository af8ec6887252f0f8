package crashtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/witan-dev/witan/dag/crashtest"
)

// TestPowerCutDropsUnsynced checks the harness itself: a file whose
// contents were fsynced survives a power cut whole, one whose contents
// were only written does not keep them.
func TestPowerCutDropsUnsynced(t *testing.T) {
	d := crashtest.Mount(t)
	synced, err := os.Create(filepath.Join(d.Mnt, "synced"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synced.WriteString("kept"); err != nil {
		t.Fatal(err)
	}
	if err := synced.Sync(); err != nil {
		t.Fatal(err)
	}
	unsynced, err := os.Create(filepath.Join(d.Mnt, "unsynced"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unsynced.WriteString("lost"); err != nil {
		t.Fatal(err)
	}
	if err := d.PowerCut(); err != nil {
		t.Fatal(err)
	}
	synced.Close()
	unsynced.Close()
	if b, err := os.ReadFile(filepath.Join(d.Root, "synced")); err != nil || string(b) != "kept" {
		t.Errorf("synced file after the cut: %q, %v; want \"kept\"", b, err)
	}
	// LazyFS passes the create through, so the name survives; its contents do not.
	if b, err := os.ReadFile(filepath.Join(d.Root, "unsynced")); err == nil && len(b) != 0 {
		t.Errorf("unsynced file after the cut holds %q; want nothing", b)
	}
	if err := d.Remount(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Mnt, "synced")); err != nil || string(b) != "kept" {
		t.Errorf("synced file after remounting: %q, %v", b, err)
	}
}
