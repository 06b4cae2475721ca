package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/bench"
)

// abSideCommand is the hidden command that runs one side of bench --ab in
// a child process, when the two sides load different ONNX Runtime
// libraries: `ortel __ab-side LABEL LIBRARY MODEL SPEC BASE...`, the
// side parsed from BASE (the command line less --ab) and SPEC (the
// side's --ab value) as the parent parsed it. It speaks the protocol of
// bench.ServeABSide on its standard input and output. Not listed in help.
const abSideCommand = "__ab-side"

// sideLibraries finds the library of each side (its --ort, else ortlib's
// choice) and says whether they differ: then each side runs in a child
// process.
func sideLibraries(sides [2]*benchAction) ([2]ortlib.Library, bool, error) {
	var libs [2]ortlib.Library
	for i, s := range sides {
		var err error
		if libs[i], err = ortlib.Select(s.ort); err != nil {
			if s.ort != "" {
				return libs, false, fmt.Errorf("--ab side %s: --ort %s: %w", "AB"[i:i+1], s.ort, err)
			}
			return libs, false, fmt.Errorf("--ab side %s: %w", "AB"[i:i+1], err)
		}
	}
	return libs, !ortlib.SameFile(libs[0].Path, libs[1].Path), nil
}

// childConfig is a side's Config for a child process: the flags parsed
// and the model resolved, without loading ONNX Runtime (the child loads
// its own and checks the inputs).
func (a *benchAction) childConfig(model string) (bench.Config, error) {
	if err := a.validateGroups(); err != nil {
		return bench.Config{}, err
	}
	cfg, err := a.config(model)
	if err != nil {
		return cfg, err
	}
	_, err = resolveBenchModel(&cfg, model)
	return cfg, err
}

// childSpecs is how to start each side's child: this program's hidden
// command with the side's library, model and options. Side B is quiet
// about a model side A has announced.
func childSpecs(e *env, libs [2]ortlib.Library, models [2]string, specs []string, base []string, quiet bool) (*[2]bench.ABChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--ab: the sides load different ONNX Runtime libraries, so each runs in a child process of this program, "+
			"which cannot be found: %w", err)
	}
	var out [2]bench.ABChild
	for i := range out {
		args := []string{abSideCommand, "AB"[i : i+1], libs[i].Path, models[i], specs[i]}
		args = append(args, base...)
		if i == 1 && models[1] == models[0] {
			args = append(args, "--quiet")
		}
		out[i] = bench.ABChild{Path: exe, Args: args, Library: libs[i].Path}
		if !quiet {
			out[i].Stderr = e.stderr
		}
	}
	return &out, nil
}

// runABSide is `ortel __ab-side LABEL LIBRARY MODEL SPEC BASE...`: one side
// of an A/B comparison in a child process. Its output is the protocol, on
// the process's own standard output (not the redacting one).
func runABSide(ctx context.Context, e *env, args []string) int {
	if len(args) < 4 {
		fmt.Fprintf(e.stderr, "ortel %s: this command is bench --ab's own (it runs one side in a child process)\n", abSideCommand)
		return exitUsage
	}
	label, lib, model, spec, base := args[0], args[1], args[2], args[3], args[4:]
	err := serveSide(ctx, e, label, lib, model, spec, base, os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(e.stderr, "ortel bench --ab side %s: %v\n", label, err)
		return exitFailure
	}
	return exitOK
}

// serveSide parses the side as the parent did, loads its library and
// serves its blocks.
func serveSide(ctx context.Context, e *env, label, lib, model, spec string, base []string, in io.Reader, out io.Writer) error {
	side, _, _, err := parseSide(label, spec, base)
	if err != nil {
		return err
	}
	side.ort = lib
	cfg, _, err := side.prepare(e, model)
	if err != nil {
		return err
	}
	if !side.output.quiet {
		cfg.Progress = e.stderr
	}
	return bench.ServeABSide(ctx, cfg, in, out)
}
