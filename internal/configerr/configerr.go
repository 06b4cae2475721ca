// Package configerr is how an engine says that its configuration breaks
// one of its rules, in its own words, while its caller names the options
// its own way.
//
// An engine's Validate returns an *Error whose message names the fields
// it concerns in braces, {Concurrency} or {Session.OptLevel}: Error prints
// them as the field names (the engine's words), and Render lets a caller
// print each field as it knows it. The ortel command prints the flag that
// sets the field (--concurrency), from one table, so a rule is written
// once, in the engine, and its message still names what the user typed.
//
//	err := configerr.New("bench", "{Concurrency} %d needs {Scenario} concurrent, server or offline", 4)
//	err.Error()                                       // Concurrency 4 needs Scenario concurrent, server or offline
//	err.Render(func(f string) string { return flag[f] }) // --concurrency 4 needs --scenario concurrent, server or offline
package configerr

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// field matches a field reference in a message: {Name} or {Name.Sub}.
var field = regexp.MustCompile(`\{([A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)*)\}`)

// Error is a configuration that breaks a rule of its engine.
type Error struct {
	// Engine is the package whose Config the fields belong to ("bench",
	// "history"): two engines may have fields of the same name.
	Engine string
	format string
	args   []any
	// wrapped is the error the message ends with (%w), if any.
	wrapped error
}

// New returns the error for engine with the message format and args, as
// fmt.Errorf takes them (a %w is unwrapped). Fields are named in format
// as {Field}; the arguments are never searched for braces, so a value
// the user gave is printed as it is.
func New(engine, format string, args ...any) *Error {
	e := &Error{Engine: engine, format: format, args: args}
	if w := fmt.Errorf(field.ReplaceAllString(format, "$1"), args...); errors.Unwrap(w) != nil {
		e.wrapped = errors.Unwrap(w)
	}
	return e
}

// Error is the message with each field named as it is in the Config.
func (e *Error) Error() string { return e.Render(nil) }

// Unwrap returns the error the message wraps with %w, if any.
func (e *Error) Unwrap() error { return e.wrapped }

// Fields are the fields the message names, in order, each once.
func (e *Error) Fields() []string {
	var out []string
	for _, m := range field.FindAllStringSubmatch(e.format, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// Render is the message with each field named by name(field); a nil name,
// or one that returns "", keeps the field's own name.
func (e *Error) Render(name func(field string) string) string {
	format := field.ReplaceAllStringFunc(e.format, func(m string) string {
		f := m[1 : len(m)-1]
		if name != nil {
			if n := name(f); n != "" {
				f = n
			}
		}
		return strings.ReplaceAll(f, "%", "%%")
	})
	return fmt.Sprintf(strings.ReplaceAll(format, "%w", "%v"), e.args...)
}

// RenderAll is err's message with the message of every *Error in its
// chain (wrapped by %w or joined by errors.Join) rendered by name: an
// engine error that another error wraps is renamed where it stands.
func RenderAll(err error, name func(engine, field string) string) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, ce := range all(err) {
		own := ce.Error()
		renamed := ce.Render(func(f string) string { return name(ce.Engine, f) })
		msg = strings.Replace(msg, own, renamed, 1)
	}
	return msg
}

// all lists the *Errors in err's tree, outermost first.
func all(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if ce, ok := err.(*Error); ok {
			out = append(out, ce)
			walk(ce.wrapped) // its message holds the wrapped one's, renamed after it
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}
