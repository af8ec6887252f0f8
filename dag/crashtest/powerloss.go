package crashtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A Disk is a directory mounted through LazyFS, a FUSE filesystem that
// keeps what is written in its own cache until it is fsynced and drops
// whatever was never synced when it is killed: the model of a power cut.
// A program writes under Mnt; after PowerCut, Root holds exactly what
// reached the disk, and a test reopens Root (or mounts it again) to check
// that every acknowledged write survived.
//
// LazyFS passes create, unlink and rename straight through to Root, so a
// missing directory fsync is not caught by a Disk; un-fsynced file
// contents (write, or mmap and msync) are.
type Disk struct {
	Root string // the backing directory: what reached the disk
	Mnt  string // the mount point a program under test writes to

	script string
	pid    string
	cfg    string // LazyFS's config file; its log is cfg + ".log", its fault FIFO cfg + ".fifo"
	cut    bool
}

var buildOnce struct {
	sync.Once
	err error
}

// PowerLossScript returns the path of the power-loss script of the shared
// tools (shared/tools/lazyfs/powerloss.sh beside the repository), or the
// one WITAN_POWERLOSS names. It skips the test where /dev/fuse is absent
// or the process is not root (LazyFS cannot mount there), and fails it
// where the machine could run it but the script is missing.
func PowerLossScript(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("power-loss test: /dev/fuse is absent, LazyFS cannot mount here")
	}
	if os.Geteuid() != 0 {
		t.Skip("power-loss test: LazyFS mounts need root (allow_other and apt-get for its build)")
	}
	if p := os.Getenv("WITAN_POWERLOSS"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("power-loss test: no go.mod above the test's directory")
		}
		dir = up
	}
	p := filepath.Join(filepath.Dir(dir), "shared", "tools", "lazyfs", "powerloss.sh")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("power-loss test: /dev/fuse is here but %s is not (set WITAN_POWERLOSS to the script): %v", p, err)
	}
	return p
}

// Mount mounts a new LazyFS disk in the test's temporary directory,
// building LazyFS on the first call of the process (its build script
// installs its Debian packages and takes about 30 s). The disk is cut
// (unmounted) at the test's end if the test did not cut it.
func Mount(t testing.TB) *Disk {
	t.Helper()
	script := PowerLossScript(t)
	buildOnce.Do(func() {
		out, err := exec.Command("bash", filepath.Join(filepath.Dir(script), "build.sh")).CombinedOutput()
		if err != nil {
			buildOnce.err = fmt.Errorf("building LazyFS: %v\n%s", err, out)
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	dir := t.TempDir()
	d := &Disk{Root: filepath.Join(dir, "root"), Mnt: filepath.Join(dir, "mnt"), script: script}
	if err := d.mount(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !d.cut {
			d.PowerCut()
		}
	})
	return d
}

// Remount mounts Root again at Mnt after a PowerCut, so that a program can
// restart on what survived and be cut again.
func (d *Disk) Remount() error {
	if !d.cut {
		return fmt.Errorf("crashtest: Remount of a disk that is still mounted")
	}
	return d.mount()
}

// mount mounts Root at Mnt, trying up to eight times: LazyFS takes a
// config path that holds "-o" or "-O" (the script's temporary file name is
// random: one in 31 begins with o or O) for an option and then fails to
// start, which a new name avoids. Three tries in a row met such names in a
// fresh-clone run (one mount in some 30,000 would).
func (d *Disk) mount() error {
	var err error
	for range 8 {
		if err = d.mountOnce(); err == nil {
			return nil
		}
	}
	return err
}

func (d *Disk) mountOnce() error {
	var stderr bytes.Buffer
	cmd := exec.Command("bash", d.script, "mount", d.Root, d.Mnt)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("crashtest: mounting LazyFS at %s: %v: %s", d.Mnt, err, stderr.String())
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return fmt.Errorf("crashtest: mounting LazyFS printed no pid: %s", stderr.String())
	}
	pid := fields[len(fields)-1]
	if _, err := strconv.Atoi(pid); err != nil {
		return fmt.Errorf("crashtest: mounting LazyFS printed %q, not a pid", out)
	}
	cfg, err := configPath(pid)
	if err != nil {
		exec.Command("bash", d.script, "crash", pid, d.Mnt).Run() //nolint:errcheck // unmounting what is refused
		return err
	}
	d.pid, d.cfg, d.cut = pid, cfg, false
	return nil
}

// configPath returns the config file named on the command line of the
// LazyFS of process pid (the script names it there only).
func configPath(pid string) (string, error) {
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		return "", fmt.Errorf("crashtest: LazyFS's command line: %w", err)
	}
	args := strings.Split(string(cmdline), "\x00")
	for i, a := range args {
		if a == "--config-path" && i+1 < len(args) {
			return args[i+1], nil
		}
	}
	return "", fmt.Errorf("crashtest: no --config-path on LazyFS's command line %q", args)
}

// Died reports whether LazyFS, mounted and not cut, is no longer running:
// it died by itself (LazyFS aborts now and then, "Resource deadlock
// avoided"), which is a power cut the test did not choose, and every
// operation under Mnt fails from then on. why is the end of LazyFS's log.
// Call PowerCut, then Remount, to go on.
func (d *Disk) Died() (why string, died bool) {
	if d.cut {
		return "", false
	}
	pid, err := strconv.Atoi(d.pid)
	if err != nil {
		return "", false
	}
	if err := syscall.Kill(pid, 0); err == nil {
		if st, err := os.ReadFile("/proc/" + d.pid + "/stat"); err != nil || !bytes.Contains(st, []byte(") Z ")) {
			return "", false // running (a zombie has died)
		}
	}
	why = "LazyFS is not running"
	if b, err := os.ReadFile(d.cfg + ".log"); err == nil {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		why += "; its log ends: " + strings.Join(lines[max(0, len(lines)-3):], " / ")
	}
	return why, true
}

// PowerCut cuts the power: LazyFS is killed, so whatever was written under
// Mnt and never synced is gone, and Mnt is unmounted. The program writing
// there must be killed right after (it can no longer write); Root then
// holds what reached the disk.
func (d *Disk) PowerCut() error {
	if d.cut {
		return nil
	}
	d.cut = true
	out, err := exec.Command("bash", d.script, "crash", d.pid, d.Mnt).CombinedOutput()
	if err != nil {
		return fmt.Errorf("crashtest: power cut at %s: %v: %s", d.Mnt, err, out)
	}
	return nil
}

// CrashBefore makes the disk die just before the first operation op
// (LazyFS's names: "create", "open", "write", "fsync", "truncate",
// "unlink", …) on a path that matches the regular expression path:
// LazyFS kills itself there, and from then on every operation under Mnt
// fails (ECONNABORTED; a page of a mapped file raises SIGBUS), as when a
// disk is pulled out under a running program. What was never synced is
// lost as by PowerCut, which then unmounts Mnt.
func (d *Disk) CrashBefore(op, path string) error {
	if d.cut {
		return fmt.Errorf("crashtest: CrashBefore on a disk that is cut")
	}
	cfg := d.cfg
	fifo, err := os.OpenFile(cfg+".fifo", os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("crashtest: LazyFS's fault FIFO: %w", err)
	}
	_, err = fmt.Fprintf(fifo, "lazyfs::crash::timing=before::op=%s::from_rgx=%s\n", op, path)
	if cerr := fifo.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("crashtest: LazyFS's fault FIFO: %w", err)
	}
	// LazyFS takes the fault on its own thread; its log says when.
	for range 100 {
		b, err := os.ReadFile(cfg + ".log")
		if err == nil && bytes.Contains(b, []byte("VALID crash fault")) {
			if bytes.Contains(b, []byte("INVALID crash fault")) {
				return fmt.Errorf("crashtest: LazyFS refused the fault: %s", b)
			}
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("crashtest: LazyFS did not take the fault within 5 s")
}
