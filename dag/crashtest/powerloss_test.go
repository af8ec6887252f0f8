package crashtest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

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

// TestDied: a disk that dies by itself (LazyFS killed by its own fault
// injection here, as it aborts now and then on its own) is reported by
// Died, a running one is not, and after PowerCut and Remount the disk
// works again with what was synced before.
func TestDied(t *testing.T) {
	d := crashtest.Mount(t)
	if why, died := d.Died(); died {
		t.Fatalf("a running disk reported dead: %s", why)
	}
	if err := os.WriteFile(filepath.Join(d.Mnt, "before"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(d.Mnt, "before"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := d.CrashBefore("create", "after"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Mnt, "after"), []byte("lost"), 0o600); err == nil {
		t.Fatal("a create on a dead disk succeeded")
	}
	var why string
	var died bool
	for range 50 {
		if why, died = d.Died(); died {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !died {
		t.Fatal("Died says a disk that failed a create is running")
	}
	t.Logf("Died: %s", why)
	if err := d.PowerCut(); err != nil {
		t.Fatal(err)
	}
	if _, died := d.Died(); died {
		t.Error("a cut disk reported dead")
	}
	if err := d.Remount(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Mnt, "before")); err != nil || string(b) != "kept" {
		t.Errorf("synced file after the disk died and was remounted: %q, %v", b, err)
	}
	if why, died := d.Died(); died {
		t.Errorf("a remounted disk reported dead: %s", why)
	}
}
