package ortapi_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/internal/ortapi"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestProvidersIndexMatchesBindingHeader counts the OrtApi members before
// GetAvailableProviders in the binding's header: a miscount would call
// another function.
func TestProvidersIndexMatchesBindingHeader(t *testing.T) {
	src := bindingHeader(t)
	for _, c := range []struct {
		name string
		want int
	}{{"GetAvailableProviders", ortapi.IdxGetAvailableProviders}, {"ReleaseAvailableProviders", ortapi.IdxReleaseAvailableProviders}} {
		i := strings.Index(src, "ORT_API2_STATUS("+c.name+",")
		if i < 0 {
			t.Fatalf("no %s in the header", c.name)
		}
		// Members before it: count them in the struct up to its line.
		if n := countOrtAPIEntries(t, src[:i]+"\n};"); n != c.want {
			t.Errorf("%s is entry %d of OrtApi, package uses %d", c.name, n, c.want)
		}
	}
}

func TestAvailableProvidersListsCPU(t *testing.T) {
	testenv.RequireORT(t)
	got, err := ortapi.AvailableProviders()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "CPUExecutionProvider") {
		t.Errorf("available providers %q lack CPUExecutionProvider", got)
	}
}
