package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/witan-dev/witan/dag/badgerstore"
)

// storeFormat names the layout of the node's data directory: the
// badgerstore key layout version, which witan up refuses to open when it
// differs (badgerstore.ErrFormat).
var storeFormat = fmt.Sprintf("badgerstore %d", badgerstore.Format)

// VersionCommand prints what this binary is: the module version (or
// "devel"), the VCS revision it was built from, the Go version, and the
// store format it reads and writes. Bug reports start with it.
type VersionCommand struct {
	main *Main
}

// Version is what witan version prints.
type Version struct {
	Version     string `json:"version"`
	Revision    string `json:"vcs_revision,omitempty"`
	Modified    bool   `json:"vcs_modified,omitempty"`
	Go          string `json:"go"`
	StoreFormat string `json:"store_format"`
}

func (c *VersionCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("version", "version [-json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	v := buildVersion(debug.ReadBuildInfo)
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(v)
	}
	w := c.main.Stdout
	fmt.Fprintf(w, "witan %s\n", v.Version)
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(w, "  revision      %s%s\n", v.Revision, mod)
	}
	fmt.Fprintf(w, "  go            %s\n", v.Go)
	fmt.Fprintf(w, "  store format  %s\n", v.StoreFormat)
	return nil
}

// buildVersion reads the build information: the version set at link time
// wins, then the main module's version (go install …@v0.1.0), then "devel".
func buildVersion(read func() (*debug.BuildInfo, bool)) Version {
	v := Version{Version: version, Go: runtime.Version(), StoreFormat: storeFormat}
	bi, ok := read()
	if !ok {
		return v
	}
	if v.Version == "devel" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}
