package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
)

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print the versions of ortel, Go and the ONNX Runtime library",
		intro: `Usage:
  ortel version

Prints ortel's version, the instrument package version, the Go version, and
the ONNX Runtime library it finds (or why it finds none).
`,
		new: func() action { return versionAction{} },
	}
}

// versionAction is ortel version: no flags.
type versionAction struct{}

func (versionAction) flags(*flagSet) {}

func (versionAction) run(ctx context.Context, e *env, pos []string) error {
	if len(pos) > 0 {
		return usagef("version takes no arguments, got %q", pos[0])
	}
	fmt.Fprintf(e.stdout, "ortel %s\n", version)
	fmt.Fprintf(e.stdout, "instrument %s\n", instrument.Version())
	fmt.Fprintf(e.stdout, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if p, err := ortlib.Init(); err != nil {
		fmt.Fprintf(e.stdout, "onnxruntime: not loaded: %v\n", err)
	} else {
		fmt.Fprintf(e.stdout, "onnxruntime %s (%s)\n", ort.GetVersion(), p)
	}
	return nil
}

// moduleVersion is the version `go install .../cmd/ortel@VERSION` recorded
// in the binary (v0.1.0 -> 0.1.0) when the build set none with -ldflags
// (v is then the source's -dev default); otherwise v.
func moduleVersion(v string) string {
	if !strings.HasSuffix(v, "-dev") {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return v
}
