package telemetry

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// minSecretLen is the shortest value a Redactor hides. Shorter values
// would blank out ordinary words and digits everywhere; a credential that
// short protects nothing anyway.
const minSecretLen = 4

// authSchemes are words of a header value that are not secret on their own
// ("Bearer abc" hides "abc", not every "Bearer" in the output).
var authSchemes = map[string]bool{
	"bearer": true, "basic": true, "digest": true, "token": true, "negotiate": true,
	"apikey": true, "api-key": true, "hoba": true, "mutual": true, "dpop": true,
}

// Redactor replaces credentials in text with "<redacted>". It is built
// from the OTLP header variables (OTEL_EXPORTER_OTLP_HEADERS and every
// per-signal OTEL_EXPORTER_OTLP_*_HEADERS) and the passwords of the OTLP
// endpoint variables, well-formed or not, and hides each value in the
// forms it may be printed in: as written, percent-decoded,
// percent-encoded, base64 and quoted. Matching ignores ASCII case.
//
// Every sink a program installs (its own output, the OpenTelemetry logger
// and error handler, gRPC's logger) passes its text through one Redactor,
// so a value that reaches a log line by any path is hidden. A nil or empty
// Redactor returns text unchanged.
type Redactor struct {
	// needles are the lower-case forms to hide, longest first, so a long
	// secret is replaced whole before any shorter piece of it.
	needles []string
}

// RedactorFromEnv builds the Redactor of an environment given as
// "NAME=value" entries (os.Environ()).
func RedactorFromEnv(environ []string) *Redactor {
	var values []string
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "OTEL_") {
			continue
		}
		switch {
		case strings.HasSuffix(name, "_HEADERS"):
			values = append(values, headerSecrets(v)...)
		case strings.HasSuffix(name, "_ENDPOINT"):
			values = append(values, endpointSecrets(v)...)
		}
	}
	return NewRedactor(values...)
}

// NewRedactor returns a Redactor hiding each value (and its encodings);
// values shorter than 4 bytes are ignored.
func NewRedactor(values ...string) *Redactor {
	seen := map[string]bool{}
	r := &Redactor{}
	add := func(s string) {
		s = asciiLower(s)
		if len(s) >= minSecretLen && !seen[s] {
			seen[s] = true
			r.needles = append(r.needles, s)
		}
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < minSecretLen {
			continue
		}
		forms := []string{v, url.QueryEscape(v), url.PathEscape(v), strings.ReplaceAll(url.QueryEscape(v), "+", "%20")}
		if dec, err := url.PathUnescape(v); err == nil {
			forms = append(forms, dec)
		}
		for _, f := range forms {
			add(f)
			add(strings.Trim(strconv.Quote(f), `"`))
			if j, err := json.Marshal(f); err == nil {
				add(strings.Trim(string(j), `"`))
			}
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			// base64 is case-sensitive, but matching it without case only
			// hides a little more.
			add(enc.EncodeToString([]byte(v)))
		}
	}
	slices.SortFunc(r.needles, func(a, b string) int { return len(b) - len(a) })
	return r
}

// Empty reports whether r hides nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.needles) == 0 }

// Redact returns s with every secret replaced by "<redacted>".
func (r *Redactor) Redact(s string) string {
	if r.Empty() || s == "" {
		return s
	}
	for _, n := range r.needles {
		if len(n) > len(s) {
			continue
		}
		lower := asciiLower(s)
		i := strings.Index(lower, n)
		if i < 0 {
			continue
		}
		var b strings.Builder
		for i >= 0 {
			b.WriteString(s[:i])
			b.WriteString(redacted)
			s, lower = s[i+len(n):], lower[i+len(n):]
			i = strings.Index(lower, n)
		}
		b.WriteString(s)
		s = b.String()
	}
	return s
}

// Writer returns a writer that redacts each Write before passing it to w.
// Each Write is redacted on its own: callers write whole lines (fmt.Fprintf),
// so a secret is never split across two writes.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r.Empty() {
		return w
	}
	if rw, ok := w.(*redactingWriter); ok && rw.r == r {
		return w
	}
	return &redactingWriter{w: w, r: r}
}

type redactingWriter struct {
	w io.Writer
	r *Redactor
}

func (w *redactingWriter) Write(p []byte) (int, error) {
	s := w.r.Redact(string(p))
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// headerSecrets returns what to hide of one headers variable: each value,
// each word of a value that is not an auth scheme, and — for an entry that
// does not parse (no '=', or a key that is no header name) — the whole
// entry and everything after its first separator, since where its value
// starts is a guess.
func headerSecrets(v string) []string {
	var out []string
	if strings.TrimSpace(v) != "" {
		out = append(out, v)
	}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		k, val, found := strings.Cut(entry, "=")
		if found && validHeaderKey(strings.ToLower(strings.TrimSpace(k))) {
			out = append(out, valueSecrets(val)...)
			continue
		}
		// Malformed: "authorization Bearer abc", "authorization: abc", "k v=x".
		out = append(out, entry)
		if i := strings.IndexAny(entry, "=: \t"); i >= 0 {
			out = append(out, valueSecrets(entry[i+1:])...)
		}
		if found {
			out = append(out, valueSecrets(val)...)
		}
	}
	return out
}

// valueSecrets returns a header value, decoded and as written, and its
// words other than auth schemes.
func valueSecrets(val string) []string {
	val = strings.TrimSpace(val)
	forms := []string{val}
	if dec, err := url.PathUnescape(val); err == nil && dec != val {
		forms = append(forms, dec)
	}
	out := append([]string(nil), forms...)
	for _, f := range forms {
		for _, w := range strings.FieldsFunc(f, func(r rune) bool { return r == ' ' || r == '\t' || r == ':' || r == '=' }) {
			if !authSchemes[strings.ToLower(w)] {
				out = append(out, w)
			}
		}
	}
	return out
}

// endpointSecrets returns the password of an endpoint URL with user
// information (https://user:password@host).
func endpointSecrets(v string) []string {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.User == nil {
		return nil
	}
	if p, ok := u.User.Password(); ok {
		return []string{p}
	}
	return []string{u.User.Username()}
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay those of
// the input.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
