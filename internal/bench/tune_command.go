package bench

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
)

// tuneCommand is the ortel bench command line that measures configuration
// c alone with cfg's other settings; inputs are the shapes the sweep ran.
func tuneCommand(cfg *Config, c tuneConfig, inputs []report.Tensor) string {
	args := []string{"ortel", "bench",
		"--opt-level", c.opt, "--threads", strconv.Itoa(c.threads), "--execution-mode", c.mode}
	bc := c.apply(*cfg)
	if len(bc.Session.Providers) > 0 {
		names := make([]string, len(bc.Session.Providers))
		for i, p := range bc.Session.Providers {
			names[i] = p.Name
		}
		args = append(args, "--provider", strings.Join(names, ","))
	}
	if cfg.InterOpThreads > 0 {
		args = append(args, "--inter-threads", strconv.Itoa(cfg.InterOpThreads))
	}
	for _, k := range sortedKeys(cfg.Session.Config) {
		args = append(args, "--session-config", k+"="+cfg.Session.Config[k])
	}
	if len(bc.Session.Providers) > 0 && bc.Session.accelerator() != nil {
		for _, k := range sortedKeys(cfg.Session.ProviderOptions) {
			args = append(args, "--provider-option", k+"="+cfg.Session.ProviderOptions[k])
		}
	}
	for _, in := range inputs {
		if len(in.Shape) > 0 {
			args = append(args, "--shape", in.Name+"="+joinDims(in.Shape))
		}
	}
	for _, k := range sortedKeys(cfg.Values) {
		args = append(args, "--value", k+"="+cfg.Values[k])
	}
	warmup := strconv.Itoa(cfg.Warmup)
	if cfg.WarmupAuto {
		warmup = "auto"
	}
	args = append(args, "--runs", strconv.Itoa(cfg.Runs), "--warmup", warmup, "--seed", strconv.FormatUint(cfg.Seed, 10))
	model := cfg.Tune.Model
	if model == "" {
		model = cfg.ModelPath
	}
	args = append(args, model)
	for i, a := range args {
		args[i] = ShellQuote(a)
	}
	return strings.Join(args, " ")
}

// ShellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./=,:@+%.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func joinDims(d []int64) string {
	parts := make([]string, len(d))
	for i, n := range d {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]string) []string {
	out := slices.Sorted(maps.Keys(m))
	return out
}
