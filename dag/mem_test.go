package dag_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/storetest"
)

func TestMemStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) dag.Store { return dag.NewMemStore() })
}
