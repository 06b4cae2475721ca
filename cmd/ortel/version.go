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
  ortel version [--format json]

Prints ortel's version, the instrument package version, the Go version, and
the ONNX Runtime library it finds (or why it finds none).
`,
		args: noArgs,
		new:  func() action { return new(versionAction) },
	}
}

// versionAction is ortel version.
type versionAction struct{ format string }

func (a *versionAction) flags(fs *flagSet) {
	registerTextOrJSON(fs, &a.format, "the versions as one JSON object")
}

func (a *versionAction) run(ctx context.Context, e *env, pos []string) error {
	if len(pos) > 0 {
		return usagef("version takes no arguments, got %q", pos[0])
	}
	if err := checkTextOrJSON(a.format); err != nil {
		return err
	}
	v := versionInfo{Ortel: version, Instrument: instrument.Version(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if p, err := ortlib.Init(); err != nil {
		v.ONNXRuntime.Error = err.Error()
	} else {
		v.ONNXRuntime = runtimeInfo{Loaded: true, Version: ort.GetVersion(), Library: p}
	}
	if a.format == "json" {
		return printJSON(e.stdout, v)
	}
	fmt.Fprintf(e.stdout, "ortel %s\n", v.Ortel)
	fmt.Fprintf(e.stdout, "instrument %s\n", v.Instrument)
	fmt.Fprintf(e.stdout, "go %s %s/%s\n", v.Go, v.OS, v.Arch)
	if !v.ONNXRuntime.Loaded {
		fmt.Fprintf(e.stdout, "onnxruntime: not loaded: %s\n", v.ONNXRuntime.Error)
	} else {
		fmt.Fprintf(e.stdout, "onnxruntime %s (%s)\n", v.ONNXRuntime.Version, v.ONNXRuntime.Library)
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
