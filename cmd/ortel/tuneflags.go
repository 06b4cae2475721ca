package main

import (
	"time"

	"github.com/ortel-dev/ortel/internal/bench"
)

// defaultTuneDuel caps --tune's final duel. A variable for the package's
// tests only: TestMain sets it to 0 so that the --tune tests which do not
// test the duel do not each spend its 10 s.
var defaultTuneDuel = 10 * time.Second

// tuneFlags are bench's --tune flags.
type tuneFlags struct {
	on                        bool
	optLevels, threads, modes string
	rounds                    int
	duel                      time.Duration
}

func (f *tuneFlags) register(fs *flagSet) {
	fs.boolFlag(&f.on, "tune", false,
		"tuning sweep: every combination of graph optimization level, intra-op thread count, execution mode and "+
			"execution provider gets its own session and --runs single-stream runs, interleaved in rounds; ranks them by "+
			"p50 with 95% intervals, names the best (and whether the runner-up is told apart) and prints the command line "+
			"that reproduces it. A dimension fixed by --opt-level, --threads, --execution-mode or --provider is not swept "+
			"(--provider with several names tries each)")
	fs.stringFlag(&f.optLevels, "tune-opt-levels", "L", "",
		"optimization levels the sweep tries, e.g. extended,all (default disable,basic,extended,all)")
	fs.stringFlag(&f.threads, "tune-threads", "N,N", "",
		"intra-op thread counts the sweep tries, e.g. 1,2,4 (default: 1 and the powers of two up to the number of CPUs, and it)")
	fs.stringFlag(&f.modes, "tune-execution-modes", "M", "",
		"execution modes the sweep tries (default sequential,parallel)")
	fs.intFlag(&f.rounds, "tune-rounds", "N", bench.DefaultTuneRounds,
		"rounds the sweep splits each configuration's runs into (default 5)")
	fs.durationFlag(&f.duel, "tune-duel", "D", defaultTuneDuel,
		"cap of the final duel: the best configuration against the default one, interleaved as in --ab, until the p50 and p90 "+
			"intervals settle against ±2% (default 10s; 0 skips it)")
}

// parse returns the sweep the flags ask for, nil without --tune; model is
// the model as given on the command line, for the reproducing command.
// What a sweep combines with is bench.Config.Validate's.
func (f *tuneFlags) parse(model string) (*bench.Tune, error) {
	if !f.on {
		if f.optLevels != "" || f.threads != "" || f.modes != "" || f.rounds != bench.DefaultTuneRounds || f.duel != defaultTuneDuel {
			return nil, usagef("--tune-opt-levels, --tune-threads, --tune-execution-modes --tune-rounds and --tune-duel apply to --tune")
		}
		return nil, nil
	}
	if f.duel < 0 {
		return nil, usagef("--tune-duel must not be negative (got %s)", f.duel)
	}
	t := &bench.Tune{Rounds: f.rounds, Model: model, Duel: f.duel}
	var err error
	if t.OptLevels, err = bench.ParseTuneList("Tune.OptLevels", f.optLevels, bench.ParseOptLevel); err != nil {
		return nil, usage(err)
	}
	if t.ExecutionModes, err = bench.ParseTuneList("Tune.ExecutionModes", f.modes, bench.ParseExecutionMode); err != nil {
		return nil, usage(err)
	}
	if f.threads != "" {
		if t.Threads, err = bench.ParseTuneThreads(f.threads); err != nil {
			return nil, usage(err)
		}
	}
	return t, nil
}
