package main

import (
	"flag"

	"github.com/ortel-dev/ortel/internal/bench"
)

// tuneFlagsUsage documents tuneFlags in bench's usage text.
const tuneFlagsUsage = `  --tune              tuning sweep: every combination of graph optimization
                      level, intra-op thread count, execution mode and execution
                      provider gets its own session and --runs single-stream runs,
                      interleaved in rounds; ranks them by p50 with 95% intervals,
                      names the best (and whether the runner-up is told apart)
                      and prints the command line that reproduces it. A
                      dimension fixed by --opt-level, --threads,
                      --execution-mode or --provider is not swept (--provider
                      with several names tries each)
  --tune-opt-levels L optimization levels the sweep tries, e.g. extended,all
                      (default disable,basic,extended,all)
  --tune-threads N,N  intra-op thread counts the sweep tries, e.g. 1,2,4 (default:
                      1 and the powers of two up to the number of CPUs, and it)
  --tune-execution-modes M
                      execution modes the sweep tries (default sequential,parallel)
  --tune-rounds N     rounds the sweep splits each configuration's runs into
                      (default 5)
`

// tuneFlags are bench's --tune flags.
type tuneFlags struct {
	on                        bool
	optLevels, threads, modes string
	rounds                    int
}

func (f *tuneFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "tune", false, "")
	fs.StringVar(&f.optLevels, "tune-opt-levels", "", "")
	fs.StringVar(&f.threads, "tune-threads", "", "")
	fs.StringVar(&f.modes, "tune-execution-modes", "", "")
	fs.IntVar(&f.rounds, "tune-rounds", bench.DefaultTuneRounds, "")
}

// parse returns the sweep the flags ask for, nil without --tune; model is
// the model as given on the command line, for the reproducing command.
func (f *tuneFlags) parse(bf *benchFlags, model string) (*bench.Tune, error) {
	if !f.on {
		if f.optLevels != "" || f.threads != "" || f.modes != "" || f.rounds != bench.DefaultTuneRounds {
			return nil, usagef("--tune-opt-levels, --tune-threads, --tune-execution-modes and --tune-rounds apply to --tune")
		}
		return nil, nil
	}
	t := &bench.Tune{Rounds: f.rounds, Model: model}
	var err error
	if t.OptLevels, err = bench.ParseTuneList("--tune-opt-levels", f.optLevels, bench.ParseOptLevel); err != nil {
		return nil, usagef("%v", err)
	}
	if t.ExecutionModes, err = bench.ParseTuneList("--tune-execution-modes", f.modes, bench.ParseExecutionMode); err != nil {
		return nil, usagef("%v", err)
	}
	if f.threads != "" {
		if t.Threads, err = bench.ParseTuneThreads(f.threads); err != nil {
			return nil, usagef("%v", err)
		}
	}
	switch {
	case f.rounds < 1:
		return nil, usagef("--tune-rounds must be 1 or more (got %d)", f.rounds)
	case bf.runs > 0 && bf.runs < bench.TuneMinRuns():
		return nil, usagef("--tune ranks configurations by their p50 interval, which needs --runs %d or more (got %d)", bench.TuneMinRuns(), bf.runs)
	case bf.scen != bench.SingleStream:
		return nil, usagef("--tune measures every configuration single-stream; drop --scenario %s", bf.scen)
	case len(bf.batches) > 1:
		return nil, usagef("--tune measures one batch size; give --batch one size")
	case bf.generate > 0:
		return nil, usagef("--tune measures request latency; drop --generate")
	case bf.auto != nil || bf.duration > 0:
		return nil, usagef("--tune gives every configuration --runs runs; --runs auto and --duration do not apply")
	case bf.saveOptimized != "":
		return nil, usagef("--tune creates a session per configuration; save the best one's optimized model afterwards with its command line and --save-optimized")
	case bf.slaParsed != nil:
		return nil, usagef("--tune ranks configurations by p50; check --sla on the best one afterwards with its command line")
	}
	return t, nil
}
