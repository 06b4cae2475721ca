package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/models"
	"github.com/ortel-dev/ortel/test/testenv"
)

// completionCase is one Tab press: the words bash splits the line into
// (the last one being completed, "" after a space) and what the
// completion must offer.
type completionCase struct {
	words []string
	want  []string
	// exact: the reply is want and nothing else.
	exact bool
}

// completionCases are Tab presses covering every command, each command's
// flags, every flag's choices, catalog models and files: a command or flag
// added later is covered without editing this list.
func completionCases(dir string) []completionCase {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	cases := []completionCase{
		{words: []string{""}, want: names},
		{words: []string{"be"}, want: []string{"bench"}, exact: true},
		{words: []string{"help", "re"}, want: []string{"replay", "report"}, exact: true},
		{words: []string{"bench", "sil"}, want: []string{"silero-vad"}, exact: true},
		{words: []string{"bench", ""}, want: models.Names()},
		{words: []string{"bench", "--runs", "5", "--format", "=", "j"}, want: []string{"json"}, exact: true},
		{words: []string{"bench", "--scenario", "s"}, want: []string{"server", "single-stream"}, exact: true},
		{words: []string{"bench", "--no-hardware", "--opt-level", ""}, want: []string{"all", "basic", "disable", "extended"}, exact: true},
		{words: []string{"history", ""}, want: []string{"check", "import", "list", "prometheus", "prune", "show"}, exact: true},
		{words: []string{"completion", ""}, want: []string{"bash", "fish", "zsh"}, exact: true},
		{words: []string{"report", filepath.Join(dir, "ru")}, want: []string{filepath.Join(dir, "run.json")}, exact: true},
		{words: []string{"report", "--file", filepath.Join(dir, "ru")}, want: []string{filepath.Join(dir, "run.json")}, exact: true},
		{words: []string{"version", ""}, want: nil, exact: true},
	}
	for _, c := range commands() {
		fs, _ := c.flagSet()
		var flags []string
		for _, d := range fs.docs {
			flags = append(flags, "--"+d.name)
			if len(d.choices) > 0 {
				// A PATH|WORD value completes to files as well (--ort).
				cases = append(cases, completionCase{words: []string{c.name, "--" + d.name, ""}, want: d.choices, exact: !strings.HasPrefix(d.arg, "PATH|")})
			}
		}
		if len(flags) > 0 {
			cases = append(cases, completionCase{words: []string{c.name, "--"}, want: flags, exact: true})
		}
	}
	return cases
}

// TestCompletionInBash loads `ortel completion bash` in a real bash and
// presses Tab (COMP_WORDS, COMP_CWORD, _ortel) on every command, every
// command's flags, every flag's choices, a catalog model and a file.
func TestCompletionInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Missing(t, "needs bash for the completion test")
	}
	bin := buildOrtel(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := completionCases(dir)
	var script strings.Builder
	script.WriteString("source <(ortel completion bash) || exit 1\n")
	for i, c := range cases {
		words := append([]string{"ortel"}, c.words...)
		fmt.Fprintf(&script, "COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _ortel; printf '%%s\\n' \"case %d: ${COMPREPLY[*]}\"\n",
			bashArray(words), len(words)-1, i)
	}
	cmd := exec.Command(bash, "-c", script.String())
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	replies := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, ":")
		replies[k] = strings.Fields(v)
	}
	for i, c := range cases {
		got, ok := replies[fmt.Sprintf("case %d", i)]
		if !ok {
			t.Errorf("ortel %s<Tab>: no reply in bash's output:\n%s", strings.Join(c.words, " "), out)
			continue
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return slices.Contains(got, w) })
		if len(missing) > 0 || (c.exact && !slices.Equal(got, want)) {
			t.Errorf("ortel %s<Tab>: got %q, want %q", strings.Join(c.words, " "), got, want)
		}
	}
}

// bashArray quotes words for a bash array.
func bashArray(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// TestCompletionZshAndFish: the zsh script parses in zsh, and fish, which
// can complete a line without a terminal (complete -C), completes a
// command, a flag, a flag's choices and a catalog model with its script.
func TestCompletionZshAndFish(t *testing.T) {
	zsh, errZ := exec.LookPath("zsh")
	fish, errF := exec.LookPath("fish")
	if errZ != nil || errF != nil {
		testenv.Missing(t, "needs zsh and fish for the completion test: scripts/install-shells.sh")
	}
	bin := buildOrtel(t)
	path := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	for shell, check := range map[string]string{
		zsh:  "ortel completion zsh > $0.zsh && zsh -n $0.zsh",
		fish: "ortel completion fish | fish -n",
	} {
		cmd := exec.Command("bash", "-c", check, filepath.Join(t.TempDir(), "script"))
		cmd.Env = append(os.Environ(), path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not parse the script: %v\n%s", shell, err, out)
		}
	}
	for line, want := range map[string]string{
		"ortel hist":                "history",
		"ortel bench --fo":          "--format",
		"ortel bench --scenario of": "offline",
		"ortel bench sil":           "silero-vad",
	} {
		cmd := exec.Command(fish, "--no-config", "-c", "ortel completion fish | source; complete -C '"+line+"'")
		cmd.Env = append(os.Environ(), path)
		out, err := cmd.CombinedOutput()
		if got := strings.Fields(string(out)); err != nil || !slices.Contains(got, want) {
			t.Errorf("fish: %s<Tab>: got %q (%v), want %q", line, out, err, want)
		}
	}
}

// TestEveryCommandCompletes: a command added to the table must say how
// its positional arguments complete (noArgs when it takes none), and
// every --format flag must list its formats.
func TestEveryCommandCompletes(t *testing.T) {
	for _, c := range commands() {
		if c.args == nil {
			t.Errorf("command %s has no args completion (set noArgs when it takes no arguments)", c.name)
		}
		fs, _ := c.flagSet()
		for _, d := range fs.docs {
			if d.name == "format" && len(d.choices) == 0 {
				t.Errorf("ortel %s --format has no choices for completion (fs.choices)", c.name)
			}
		}
	}
}
