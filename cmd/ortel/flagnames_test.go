package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/configerr"
)

// fieldRef is a field named in an engine error's message.
var fieldRef = regexp.MustCompile(`\{([A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)*)\}`)

// fieldFuncs take the field their errors name as an argument.
var fieldFuncs = map[string]bool{"ParseKeyValues": true, "ParseTuneList": true, "unknownNames": true}

// engineFields reads the fields the engines' errors name: every {Field}
// in a string of their code, and the field arguments of fieldFuncs in
// theirs and in this package's.
func engineFields(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(engine, f string) {
		for _, have := range out[engine] {
			if have == f {
				return
			}
		}
		out[engine] = append(out[engine], f)
	}
	dirs := map[string]string{"bench": "../../internal/bench", "history": "../../internal/history", "attach": "../../internal/attach",
		"analysis": "../../internal/analysis", "hardware": "../../internal/hardware", "live view": "../../internal/liveview",
		"import": "../../internal/profimport", "": "."}
	for engine, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if engine == "" || n.Kind != token.STRING {
						return true
					}
					s, _ := strconv.Unquote(n.Value)
					for _, m := range fieldRef.FindAllStringSubmatch(s, -1) {
						add(engine, m[1])
					}
				case *ast.CallExpr:
					name := ""
					switch fn := n.Fun.(type) {
					case *ast.Ident:
						name = fn.Name
					case *ast.SelectorExpr:
						name = fn.Sel.Name
					}
					if !fieldFuncs[name] {
						return true
					}
					for _, a := range n.Args {
						if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, _ := strconv.Unquote(lit.Value); fieldRef.MatchString("{" + s + "}") {
								e := engine
								if e == "" {
									e = "bench" // this package calls bench's
								}
								add(e, s)
							}
						}
					}
				}
				return true
			})
		}
	}
	return out
}

// TestEveryEngineFieldHasAFlag: every Config field an engine's error
// names has its row in engineFields, so the error the user reads names
// the flag they typed. Planted: the "Session.Config" row removed, the
// test failed naming it.
func TestEveryEngineFieldHasAFlag(t *testing.T) {
	found := engineFields(t)
	if len(found["bench"]) < 30 || len(found["history"]) < 5 || len(found["attach"]) < 2 {
		t.Fatalf("found too few fields to be reading the engines' code: %v", found)
	}
	for engine, fields := range found {
		for _, f := range fields {
			if _, ok := engineFlags[engine][f]; !ok {
				t.Errorf("%s's errors name the field %s, which has no flag in engineFlags", engine, f)
			}
		}
	}
	for engine, rows := range engineFlags {
		for f, flag := range rows {
			if flag != "" && !strings.HasPrefix(flag, "--") {
				t.Errorf("engineFlags[%q][%q] = %q: not a flag", engine, f, flag)
			}
		}
	}
}

// TestEngineErrorsNameFlags: an engine's refusal reaches the user in the
// flags' words, also where another error wraps it or it is joined with
// others, and keeps the engine's words where the engine speaks to a
// library caller.
func TestEngineErrorsNameFlags(t *testing.T) {
	_, err := bench.ParseKeyValues("Session.Config", []string{"novalue"})
	if err == nil {
		t.Fatal("a KEY=VALUE without = was accepted")
	}
	if got, want := err.Error(), `Session.Config "novalue": want KEY=VALUE`; got != want {
		t.Errorf("the engine's words: %q, want %q", got, want)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"alone", err, `--session-config "novalue": want KEY=VALUE`},
		{"as a usage error", usage(err), `--session-config "novalue": want KEY=VALUE`},
		{"wrapped", fmt.Errorf("create session: %w", err), `create session: --session-config "novalue": want KEY=VALUE`},
		{"joined", errors.Join(errors.New("disk full"), err), "disk full\n" + `--session-config "novalue": want KEY=VALUE`},
		{"another engine's field", configerr.New("history", "{Metric} %q: unknown", "p42"), `--metric "p42": unknown`},
		{"a field no flag sets", configerr.New("history", "{Detection.Confidence} 2: too high"), "Detection.Confidence 2: too high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flagWords(tt.err); got != tt.want {
				t.Errorf("flagWords = %q, want %q", got, tt.want)
			}
		})
	}
}
