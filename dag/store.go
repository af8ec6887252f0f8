package dag

import "errors"

// ErrNotFound is wrapped by every lookup of an id that a store or
// ParentSource does not hold. Test for it with errors.Is.
var ErrNotFound = errors.New("dag: not found")
