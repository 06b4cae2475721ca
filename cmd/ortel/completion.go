package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/ortel-dev/ortel/internal/models"
)

// Shell completion reads the command table when the user presses Tab:
// the script `ortel completion SHELL` prints is a few lines that call
// `ortel __complete WORD...` with the words typed so far, the last one
// the word being completed, and offer the lines it prints. So a new
// command, flag or catalog model completes without a script to update.
// A line ":file" or ":dir" asks the shell for its own file or directory
// completion.

// completeCommand is the hidden command the completion scripts call.
const completeCommand = "__complete"

func completionCommand() *command {
	return &command{
		name:    "completion",
		summary: "print a shell completion script for bash, zsh or fish",
		intro: `Usage:
  ortel completion bash|zsh|fish

Prints a script that completes ortel's commands, their flags, the values of
flags that take one of a few words (--format, --scenario, ...), catalog
model names and file names. Load it in the shell's startup file:
`,
		outro: `
  bash  ~/.bashrc:                 source <(ortel completion bash)
  zsh   ~/.zshrc (after compinit): source <(ortel completion zsh)
  fish  once:  ortel completion fish > ~/.config/fish/completions/ortel.fish

The script runs ortel (the one on PATH, or the path typed) at each Tab, so
what it completes is always what that binary accepts.
`,
		args: func([]string) completion { return completion{words: shellNames()} },
		new:  func() action { return completionAction{} },
	}
}

// completionScripts are the scripts, by shell.
var completionScripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

func shellNames() []string {
	names := make([]string, 0, len(completionScripts))
	for s := range completionScripts {
		names = append(names, s)
	}
	slices.Sort(names)
	return names
}

// completionAction is ortel completion: no flags.
type completionAction struct{}

func (completionAction) flags(*flagSet) {}

func (completionAction) run(_ context.Context, e *env, pos []string) error {
	if len(pos) != 1 {
		return usagef("want one shell: %s", strings.Join(shellNames(), ", "))
	}
	s, ok := completionScripts[pos[0]]
	if !ok {
		return usagef("no completion for shell %q: want %s", pos[0], strings.Join(shellNames(), ", "))
	}
	_, err := fmt.Fprint(e.stdout, s)
	return err
}

// completion is what may follow at a point of the command line: words,
// and whether file or directory names fit too.
type completion struct {
	words       []string
	files, dirs bool
}

// noArgs is the args of a command that takes no positional arguments.
func noArgs([]string) completion { return completion{} }

// catalogOrFile completes a model argument: a catalog name or a file.
func catalogOrFile([]string) completion {
	return completion{words: models.Names(), files: true}
}

// anyFile completes positional arguments that are files.
func anyFile([]string) completion { return completion{files: true} }

// complete is what `ortel __complete WORD...` prints: the candidates for
// the last word, one a line, those that start with it; ":file" or ":dir"
// when file or directory names fit.
func complete(words []string) []string {
	if len(words) == 0 {
		return nil
	}
	cur := words[len(words)-1]
	c := completeAt(words[:len(words)-1], cur)
	var out []string
	for _, w := range c.words {
		if strings.HasPrefix(w, cur) {
			out = append(out, w)
		}
	}
	if c.dirs {
		out = append(out, ":dir")
	} else if c.files {
		out = append(out, ":file")
	}
	return out
}

// completeAt is what may come after the complete words before, the word
// being typed being cur.
func completeAt(before []string, cur string) completion {
	if len(before) == 0 {
		names := []string{"help"}
		for _, c := range commands() {
			names = append(names, c.name)
		}
		return completion{words: names}
	}
	if before[0] == "help" {
		if len(before) > 1 {
			return completion{}
		}
		return completeAt(nil, cur)
	}
	c := find(before[0])
	if c == nil {
		return completion{}
	}
	fs, _ := c.flagSet()
	pos, valueOf := scanWords(fs, before[1:])
	if valueOf != nil {
		return flagValues(fs, valueOf.Name)
	}
	if strings.HasPrefix(cur, "-") {
		return completeFlag(fs, cur)
	}
	return c.args(pos)
}

// scanWords splits the words after the command into positional arguments
// and flags; valueOf is the flag the next word is the value of, if any.
func scanWords(fs *flagSet, words []string) (pos []string, valueOf *flag.Flag) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			return append(pos, words[i+1:]...), nil
		}
		if len(w) < 2 || w[0] != '-' {
			pos = append(pos, w)
			continue
		}
		name := strings.TrimLeft(w, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || isBool(f) {
			continue
		}
		if i == len(words)-1 {
			return pos, f
		}
		i++ // its value
	}
	return pos, nil
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// completeFlag completes a word that starts with "-": the command's flag
// names, or, after "--flag=", the flag's values.
func completeFlag(fs *flagSet, cur string) completion {
	if name, _, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
		v := flagValues(fs, name)
		prefix := cur[:strings.Index(cur, "=")+1]
		for i, w := range v.words {
			v.words[i] = prefix + w
		}
		v.files, v.dirs = false, false // the shell cannot complete a file after "--flag="
		return v
	}
	var names []string
	for _, d := range fs.docs {
		names = append(names, "--"+d.name)
	}
	return completion{words: names}
}

// flagValues completes the value of flag name: its choices, or files or
// directories when its argument names one (FILE, PATH, MODEL, DB; DIR).
func flagValues(fs *flagSet, name string) completion {
	for _, d := range fs.docs {
		if d.name != name {
			continue
		}
		switch {
		case len(d.choices) > 0 || strings.HasPrefix(d.arg, "PATH|"):
			// Its words, and files for a value that may be either
			// (--ort PATH|VERSION).
			return completion{words: d.choices, files: strings.HasPrefix(d.arg, "PATH|")}
		case d.arg == "DIR":
			return completion{dirs: true}
		case d.arg == "FILE" || d.arg == "PATH" || d.arg == "DB":
			return completion{files: true}
		case d.arg == "MODEL":
			return catalogOrFile(nil)
		}
	}
	return completion{}
}

// runComplete is `ortel __complete WORD...`.
func runComplete(e *env, words []string) int {
	for _, l := range complete(words) {
		fmt.Fprintln(e.stdout, l)
	}
	return exitOK
}

// The scripts call the ortel that was typed (${COMP_WORDS[0]}, and the
// like), so a binary that is not on PATH completes too.

const bashCompletion = `# bash completion for ortel: source <(ortel completion bash)
_ortel() {
    local cur=${COMP_WORDS[COMP_CWORD]} line out i w prefix
    local -a words=()
    # bash splits --flag=value at "=": join them again.
    for ((i = 1; i <= COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if ((${#words[@]})) && { [[ $w == = && ${words[-1]} == -* ]] || [[ ${words[-1]} == -*= ]]; }; then
            words[-1]+=$w
        else
            words+=("$w")
        fi
    done
    prefix=${words[-1]%"$cur"}
    local IFS=$'\n'
    out=$("${COMP_WORDS[0]}" __complete "${words[@]}" 2>/dev/null) || return 0
    COMPREPLY=()
    for line in $out; do
        case $line in
        :file) COMPREPLY+=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;
        :dir) COMPREPLY+=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null ;;
        *) COMPREPLY+=("${line#"$prefix"}") ;;
        esac
    done
}
complete -F _ortel ortel
`

const zshCompletion = `#compdef ortel
# zsh completion for ortel: source <(ortel completion zsh), after compinit
_ortel() {
    local -a out cands
    local line
    out=("${(@f)$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    for line in "${out[@]}"; do
        case $line in
        :file) _files ;;
        :dir) _files -/ ;;
        ?*) cands+=("$line") ;;
        esac
    done
    (( ${#cands} )) && compadd -Q -- "${cands[@]}"
    return 0
}
if [ "$funcstack[1]" = "_ortel" ]; then
    _ortel "$@"
else
    compdef _ortel ortel
fi
`

const fishCompletion = `# fish completion for ortel: ortel completion fish > ~/.config/fish/completions/ortel.fish
function __ortel_complete
    set -l words (commandline -opc)
    set -l ortel $words[1]
    set -e words[1]
    set -l cur (commandline -ct)
    for line in ($ortel __complete $words "$cur" 2>/dev/null)
        switch $line
            case :file
                __fish_complete_path "$cur"
            case :dir
                __fish_complete_directories "$cur"
            case '*'
                echo $line
        end
    end
end
complete -c ortel -f -a '(__ortel_complete)'
`
