package main

import (
	"time"

	"github.com/ortel-dev/ortel/internal/history"
)

// historyListResult is what ortel history list --format json prints.
type historyListResult struct {
	// History is the store: the SQLite file, or the database URL without
	// its password.
	History string         `json:"history"`
	Series  []listedSeries `json:"series"`
}

// listedSeries is one series of a history: the runs of one model,
// workload and kind of machine, and when the first and last started.
type listedSeries struct {
	Model    string    `json:"model"`
	Workload string    `json:"workload"`
	Machine  string    `json:"machine"`
	Runs     int       `json:"runs"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
}

// listed is series for JSON: never null, times in UTC.
func listed(series []history.SeriesInfo) []listedSeries {
	out := []listedSeries{}
	for _, s := range series {
		out = append(out, listedSeries{Model: s.Model, Workload: s.Workload, Machine: s.Machine,
			Runs: s.Runs, First: s.First.UTC(), Last: s.Last.UTC()})
	}
	return out
}

// historyImportResult is what ortel history import --format json prints:
// each report, and the counts.
type historyImportResult struct {
	History string `json:"history"`
	// Imported runs were added; AlreadyThere were in the history before
	// (skipped); Failed could not be read or recorded.
	Imported     int              `json:"imported"`
	AlreadyThere int              `json:"already_there"`
	Failed       int              `json:"failed"`
	Reports      []importedReport `json:"reports"`
	// Error says which reports were not imported (exit 1).
	Error string `json:"error,omitempty"`
}

// importedReport is one report.json: imported, already_there or failed.
type importedReport struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	// RunID is the run's id in the history (absent when failed).
	RunID int64  `json:"run_id,omitempty"`
	Error string `json:"error,omitempty"`
}

func (r *historyImportResult) add(path string, id int64, added bool, err error) {
	rep := importedReport{Path: path, RunID: id}
	switch {
	case err != nil:
		rep.Status, rep.Error, rep.RunID = "failed", err.Error(), 0
		r.Failed++
	case added:
		rep.Status = "imported"
		r.Imported++
	default:
		rep.Status = "already_there"
		r.AlreadyThere++
	}
	r.Reports = append(r.Reports, rep)
}

// print writes the JSON object (with err, if any) and returns err.
func (r *historyImportResult) print(e *env, err error) error {
	if err != nil {
		r.Error = err.Error()
	}
	if werr := writeJSON(e.stdout, r); werr != nil && err == nil {
		return werr
	}
	return err
}

// historyPruneResult is what ortel history prune --format json prints:
// how many runs were removed, by which rule, and the series left.
type historyPruneResult struct {
	History string `json:"history"`
	Removed int    `json:"removed_runs"`
	// Before is --before as a time; Keep is --keep (runs kept per series).
	Before *time.Time     `json:"before,omitempty"`
	Keep   int            `json:"keep,omitempty"`
	Series []listedSeries `json:"series_left"`
}
