package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// genPercentiles are the percentiles the generation rows of the Markdown
// and HTML reports show, as the text report does.
var genPercentiles = []float64{50, 90, 99}

// maxGenSteps caps the per-step KV-cache rows the Markdown and HTML tables
// list; longer generations show their first and last steps.
const maxGenSteps = 16

// genView is the generation section as the Markdown and HTML reports show
// it: the same words, built once.
type genView struct {
	Heading string // what was generated, by which decoder
	// Rows are time to first token and time per output token: runs, min,
	// each of genPercentiles ("—" where the runs cannot support it), max.
	Rows []genRow
	// Confidence is the intervals' level ("95%"); "" when the report has
	// none (written before intervals existed).
	Confidence string
	PctNames   []string // "p50", "p90", "p99"
	TokensPerS string
	KVCache    string
	// EncoderStates says what fed the encoder states; "" for a
	// decoder-only model.
	EncoderStates string
	// Steps is the cache held after each token of the first measured
	// generation: the prefill gives the first.
	Steps []genStep
	// StepsOmitted counts the steps left out of Steps, in the middle:
	// before Steps[StepsHalf].
	StepsOmitted int
	StepsHalf    int
}

type genRow struct {
	Name      string
	Runs      int
	Min, Max  string
	Pcts      []string // per genPercentiles
	Intervals []string // per genPercentiles: "[lo, hi]" or why there is none
}

type genStep struct {
	Token string // the token just generated: "1 (prefill)", "2", ...
	Bytes string
	Added string // change from the step before; "" for the first
}

func newGenView(g *Generation) *genView {
	v := &genView{
		Heading: fmt.Sprintf("%s of %s from a %d-token prompt; decoder of %d layers, %d heads × %d, vocabulary %d",
			Plural(g.Generations, "generation"), Plural(g.OutputTokens, "token"), g.PromptTokens, g.Layers, g.Heads, g.HeadDim, g.Vocab),
		TokensPerS: fmt.Sprintf("%.1f tokens/s (p50, start to last token); decode %.1f tokens/s (p50, tokens after the first)",
			g.TokensPerS.P50, g.DecodeTokensPerS.P50),
		EncoderStates: g.EncoderStates,
		StepsHalf:     maxGenSteps / 2,
	}
	for _, p := range genPercentiles {
		v.PctNames = append(v.PctNames, "p"+strconv.FormatFloat(p, 'f', -1, 64))
	}
	add := func(name string, s stats.Summary) {
		row := genRow{Name: name, Runs: s.Count, Min: units.Duration(s.Min), Max: units.Duration(s.Max)}
		for _, p := range genPercentiles {
			row.Pcts = append(row.Pcts, pdur(s, p, percentileOf(s, p)))
			row.Intervals = append(row.Intervals, intervalCell(s, p))
			if iv, ok := s.Interval(p); ok && v.Confidence == "" {
				v.Confidence = fmt.Sprintf("%g%%", 100*iv.Confidence)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	add("time to first token", g.TTFT)
	if g.TPOT.Count > 0 {
		add("time per output token", g.TPOT)
	}

	v.KVCache = units.Bytes(g.KVCacheBytes) + " after the last token"
	if g.KVCacheBytesPerToken > 0 {
		v.KVCache += ", " + units.Bytes(g.KVCacheBytesPerToken) + " more per token"
	}
	if g.EncoderTokens > 0 {
		v.KVCache += fmt.Sprintf(" (with the cross-attention cache of %d encoder states)", g.EncoderTokens)
	}
	if g.EncoderTokens > 0 && v.EncoderStates == "" {
		v.EncoderStates = fmt.Sprintf("%d encoder states, source not recorded", g.EncoderTokens)
	}

	steps := g.KVCacheBytesPerStep
	for i, n := range steps {
		if len(steps) > maxGenSteps && i >= maxGenSteps/2 && i < len(steps)-(maxGenSteps/2-1) {
			v.StepsOmitted++
			continue
		}
		st := genStep{Token: strconv.Itoa(i + 1), Bytes: units.BytesExact(n)}
		if i == 0 {
			st.Token += " (prefill)"
		} else {
			st.Added = units.SignedBytes(n - steps[i-1])
		}
		v.Steps = append(v.Steps, st)
	}
	return v
}

// stepRows are the KV-cache steps as table rows (after token, cache,
// added), with a "… N more" row where steps were left out.
func (v *genView) stepRows() [][]string {
	var rows [][]string
	for i, s := range v.Steps {
		if v.StepsOmitted > 0 && i == v.StepsHalf {
			rows = append(rows, []string{fmt.Sprintf("… %d more", v.StepsOmitted), "", ""})
		}
		rows = append(rows, []string{s.Token, s.Bytes, orDash(s.Added)})
	}
	return rows
}

// percentileOf returns the summary's value for p, one of stats.Percentiles.
func percentileOf(s stats.Summary, p float64) float64 {
	switch p {
	case 50:
		return s.P50
	case 90:
		return s.P90
	case 95:
		return s.P95
	case 99:
		return s.P99
	case 99.9:
		return s.P999
	}
	return 0
}

// intervalCell is percentile p's confidence interval, or why the runs
// cannot give one; "" when the summary has none for p.
func intervalCell(s stats.Summary, p float64) string {
	iv, ok := s.Interval(p)
	switch {
	case !ok:
		return ""
	case iv.Sufficient:
		return fmt.Sprintf("[%s, %s]", units.Duration(*iv.Lower), units.Duration(*iv.Upper))
	case iv.Lower != nil:
		return fmt.Sprintf("insufficient runs: at least %s, bounding it needs %d", units.Duration(*iv.Lower), iv.MinSamples)
	default:
		return fmt.Sprintf("insufficient runs: needs %d", iv.MinSamples)
	}
}

// writeGenerationMarkdown renders the generation section as Markdown.
func writeGenerationMarkdown(p *printer, g *Generation) {
	v := newGenView(g)
	p.f("## Generation\n\n%s.\n\n", mdEsc(v.Heading))
	head := append(append([]string{"", "runs", "min"}, v.PctNames...), "max")
	var rows [][]string
	for _, r := range v.Rows {
		rows = append(rows, append(append([]string{r.Name, strconv.Itoa(r.Runs), r.Min}, r.Pcts...), r.Max))
	}
	mdTable(p, head, rows)
	p.f("\n")
	if v.Confidence != "" {
		rows = rows[:0]
		for _, r := range v.Rows {
			row := []string{r.Name}
			for _, c := range r.Intervals {
				row = append(row, mdEsc(orDash(c)))
			}
			rows = append(rows, row)
		}
		mdTable(p, append([]string{v.Confidence + " confidence interval"}, v.PctNames...), rows)
		p.f("\nIntervals are distribution-free (order statistics), one value per generation; — above marks a percentile the runs cannot support.\n\n")
	}
	p.f("Throughput: %s.  \nKV cache: %s.\n", mdEsc(v.TokensPerS), mdEsc(v.KVCache))
	if v.EncoderStates != "" {
		p.f("Encoder states: %s.\n", mdEsc(v.EncoderStates))
	}
	p.f("\n")
	if len(v.Steps) > 0 {
		mdTable(p, []string{"after token", "KV cache", "added"}, v.stepRows())
		p.f("\n")
	}
}

// mdTable writes a Markdown table: the header, a separator (the first
// column left-aligned, the others right-aligned) and the rows, whose cells
// are written as they are.
func mdTable(p *printer, head []string, rows [][]string) {
	p.f("| %s |\n|---|%s\n", strings.Join(head, " | "), strings.Repeat("---:|", len(head)-1))
	for _, r := range rows {
		p.f("| %s |\n", strings.Join(r, " | "))
	}
}

// generationKPIs are the HTML header's figures of a --generate run.
func generationKPIs(r *Report) []kpi {
	g := r.Generation
	if g == nil {
		return nil
	}
	return []kpi{
		{"time to first token p50", pdur(g.TTFT, 50, g.TTFT.P50)},
		{"tokens/s p50", fmt.Sprintf("%.1f", g.TokensPerS.P50)},
	}
}

// generationCSVRows are the generation section's scalars for the CSV
// summary table (section "generation"). A percentile the runs cannot
// support is an empty cell, as the other formats print —; its interval's
// bounds are empty where the runs give none.
func generationCSVRows(g *Generation) [][]string {
	if g == nil {
		return nil
	}
	var rows [][]string
	add := func(name, v, unit string) { rows = append(rows, []string{"generation", name, v, unit}) }
	addN := func(name string, v float64, unit string) { add(name, num(v), unit) }
	addI := func(name string, v int64, unit string) { add(name, strconv.FormatInt(v, 10), unit) }
	addI("generations", int64(g.Generations), "{generation}")
	addI("prompt_tokens", int64(g.PromptTokens), "{token}")
	addI("output_tokens", int64(g.OutputTokens), "{token}")
	for _, m := range []struct {
		name string
		s    stats.Summary
	}{{"ttft", g.TTFT}, {"tpot", g.TPOT}} {
		if m.s.Count == 0 {
			continue
		}
		addI(m.name+"_count", int64(m.s.Count), "{generation}")
		addN(m.name+"_min", m.s.Min, "s")
		for _, p := range stats.Percentiles {
			name := m.name + "_p" + strconv.FormatFloat(p, 'f', -1, 64)
			v := ""
			if m.s.Supported(p) {
				v = num(percentileOf(m.s, p))
			}
			add(name, v, "s")
			if iv, ok := m.s.Interval(p); ok {
				add(name+"_lower", optCell(iv.Lower), "s")
				add(name+"_upper", optCell(iv.Upper), "s")
			}
		}
		addN(m.name+"_max", m.s.Max, "s")
	}
	addN("tokens_per_s_p50", g.TokensPerS.P50, "{token}/s")
	addN("decode_tokens_per_s_p50", g.DecodeTokensPerS.P50, "{token}/s")
	addI("kv_cache_bytes", g.KVCacheBytes, "By")
	if g.KVCacheBytesPerToken > 0 {
		addI("kv_cache_bytes_per_token", g.KVCacheBytesPerToken, "By")
	}
	if g.EncoderTokens > 0 {
		addI("encoder_tokens", int64(g.EncoderTokens), "{token}")
	}
	if g.EncoderStates != "" {
		add("encoder_states", g.EncoderStates, "")
	}
	return rows
}
