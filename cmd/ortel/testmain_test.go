package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the hidden A/B side command when started as one, turns off --tune's final duel by default (see defaultTuneDuel)
// and fails the package when a test wrote into the package directory
// through a default output path (ortel-out/...): every test must pass --out
// (or an equivalent) under t.TempDir, or its output lands in the source
// tree and, once, in a commit.
func TestMain(m *testing.M) {
	// bench --ab across two ONNX Runtime libraries runs each side as a
	// child process of this program: the test binary stands in for ortel.
	if len(os.Args) > 1 && os.Args[1] == abSideCommand {
		main()
	}
	// The --tune tests measure the sweep; TestTuneFinalDuel asks for the
	// duel with --tune-duel.
	defaultTuneDuel = 0
	_, statErr := os.Stat("ortel-out")
	existed := statErr == nil
	code := m.Run()
	if _, err := os.Stat("ortel-out"); err == nil && !existed {
		fmt.Fprintln(os.Stderr, "FAIL: a test wrote into cmd/ortel/ortel-out (a default --out): give it a directory under t.TempDir()")
		_ = os.RemoveAll("ortel-out")
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
