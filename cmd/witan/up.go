package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// UpCommand runs a replica: a Badger store in the data directory, a node
// key kept beside it, and the HTTP API on loopback.
type UpCommand struct {
	main *Main
}

func (c *UpCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("up", "up [-data DIR] [-http ADDR]")
	dataDir := fs.String("data", "witan-data", "data directory (Badger store and node key)")
	httpAddr := fs.String("http", "127.0.0.1:8030", "HTTP listen address")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	key, err := loadOrCreateKey(filepath.Join(*dataDir, "node.key"))
	if err != nil {
		return err
	}
	rep, err := replica.Open(ctx, replica.Options{Dir: filepath.Join(*dataDir, "badger"), NodeKey: key})
	if err != nil {
		return err
	}
	defer rep.Close()
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(c.main.Stdout, "node  %s\ndata  %s\nhttp  http://%s/oth/v0\n", rep.NodeKey(), *dataDir, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// loadOrCreateKey reads the node key at path, creating it on first start.
func loadOrCreateKey(path string) (*dag.Signer, error) {
	s, err := readKeyFile(path)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s, err = dag.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	if err := writeKeyFile(path, s, false); err != nil {
		return nil, err
	}
	return s, nil
}
