package main

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"

	"github.com/witan-dev/witan/replica/httpapi"
)

// userMessage says what went wrong in the user's words: a node that does
// not answer is named with how to start one, and the Go package prefixes
// of the library's errors are left out.
func userMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		where := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			where = u.Scheme + "://" + u.Host
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Sprintf("no node answers at %s (connection refused): is it running? Start one with \"witan up\", or name another with -node URL or $WITAN_NODE", where)
		}
		return fmt.Sprintf("cannot reach the node at %s: %s", where, httpapi.PlainDetail(ue.Err.Error()))
	}
	return httpapi.PlainDetail(err.Error())
}
