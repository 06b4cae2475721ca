package main

import (
	"flag"
	"strings"
)

// didYouMean is the candidate closest to name by edit distance, "" when
// none is close enough to be what was meant: at most 1 edit for a name of
// up to 4 characters, 2 for a longer one. A tie goes to the first
// candidate.
func didYouMean(name string, candidates []string) string {
	limit := 1
	if len([]rune(name)) > 4 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b: the fewest
// insertions, deletions and substitutions of one character that turn a
// into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// commandSuggestion is " (did you mean NAME?)" for a mistyped command, ""
// when no command is close.
func commandSuggestion(name string) string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if s := didYouMean(name, names); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// undefinedFlagPrefix starts the flag package's error for a flag the
// command does not have.
const undefinedFlagPrefix = "flag provided but not defined: "

// flagSuggestion rewords the flag package's error for an unknown flag
// with the command's closest flag: "unknown flag --runz (did you mean
// --runs?)". Any other error is returned as it is.
func flagSuggestion(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	given, ok := strings.CutPrefix(msg, undefinedFlagPrefix)
	if !ok {
		return msg
	}
	name := strings.TrimLeft(given, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if !isDeprecated(f) {
			names = append(names, f.Name)
		}
	})
	msg = "unknown flag --" + name
	if s := didYouMean(name, names); s != "" {
		msg += " (did you mean --" + s + "?)"
	}
	return msg
}
