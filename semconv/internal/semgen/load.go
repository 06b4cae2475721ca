package semgen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The raw* types mirror the upstream semantic-conventions YAML model
// (open-telemetry/semantic-conventions, model/**/*.yaml), restricted to what
// ortel uses. Decoding is strict: an unknown key is an error, so a typo never
// goes unnoticed.

type rawFile struct {
	Groups []rawGroup `yaml:"groups"`
}

type rawGroup struct {
	ID          string         `yaml:"id"`
	Type        string         `yaml:"type"`
	Brief       string         `yaml:"brief"`
	Note        string         `yaml:"note"`
	Stability   string         `yaml:"stability"`
	MetricName  string         `yaml:"metric_name"`
	Instrument  string         `yaml:"instrument"`
	Unit        string         `yaml:"unit"`
	Extends     string         `yaml:"extends"`
	Attributes  []rawAttr      `yaml:"attributes"`
	Annotations rawAnnotations `yaml:"annotations"`

	line int
}

type rawAttr struct {
	ID               string         `yaml:"id"`
	Ref              string         `yaml:"ref"`
	Type             rawType        `yaml:"type"`
	Brief            string         `yaml:"brief"`
	Note             string         `yaml:"note"`
	Stability        string         `yaml:"stability"`
	Examples         any            `yaml:"examples"`
	RequirementLevel rawLevel       `yaml:"requirement_level"`
	Annotations      rawAnnotations `yaml:"annotations"`

	line int
}

// rawType is either a scalar type name or an enum: {members: [...]}.
type rawType struct {
	Name    string
	Enum    bool
	Members []rawMember
}

type rawMember struct {
	ID        string `yaml:"id"`
	Value     any    `yaml:"value"`
	Brief     string `yaml:"brief"`
	Note      string `yaml:"note"`
	Stability string `yaml:"stability"`
}

func (t *rawType) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		t.Name = n.Value
		return nil
	case yaml.MappingNode:
		if err := checkKeys(n, "members"); err != nil {
			return err
		}
		var v struct {
			Members []yaml.Node `yaml:"members"`
		}
		if err := n.Decode(&v); err != nil {
			return err
		}
		t.Enum = true
		for i := range v.Members {
			mn := &v.Members[i]
			if err := checkKeys(mn, "id", "value", "brief", "note", "stability"); err != nil {
				return err
			}
			var m rawMember
			if err := mn.Decode(&m); err != nil {
				return err
			}
			t.Members = append(t.Members, m)
		}
		return nil
	}
	return fmt.Errorf("line %d: type must be a type name or {members: [...]}", n.Line)
}

// rawLevel is a requirement level: a scalar (required, recommended, opt_in)
// or a one-key map such as {conditionally_required: "if the run failed"}.
type rawLevel struct {
	Level     string
	Condition string
	line      int
}

func (l *rawLevel) UnmarshalYAML(n *yaml.Node) error {
	l.line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		l.Level = n.Value
		return nil
	case yaml.MappingNode:
		if len(n.Content) != 2 || n.Content[1].Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: requirement_level must be a level name or a map with one level and its condition", n.Line)
		}
		l.Level, l.Condition = n.Content[0].Value, n.Content[1].Value
		return nil
	}
	return fmt.Errorf("line %d: requirement_level must be a level name or a map with one level and its condition", n.Line)
}

type rawAnnotations struct {
	CodeGeneration *struct {
		MetricValueType string `yaml:"metric_value_type"`
	} `yaml:"code_generation"`
	Ortel *rawOrtel `yaml:"ortel"`
}

// rawOrtel holds ortel's own keys, kept under annotations.ortel so that
// upstream tooling reading the registry ignores them.
type rawOrtel struct {
	Upstream                 bool                `yaml:"upstream"`
	SpansOnly                bool                `yaml:"spans_only"`
	Source                   stringList          `yaml:"source"`
	SourceAttributes         map[string][]string `yaml:"source_attributes"`
	DefaultEnabled           *bool               `yaml:"default_enabled"`
	Observable               bool                `yaml:"observable"`
	ExplicitBucketBoundaries []float64           `yaml:"explicit_bucket_boundaries"`
}

// metricOnly reports whether o sets a key that only a metric may carry.
func (o *rawOrtel) metricOnly() bool {
	return len(o.SourceAttributes) > 0 || o.DefaultEnabled != nil || o.Observable || len(o.ExplicitBucketBoundaries) > 0
}

// stringList accepts a single string or a list of strings.
type stringList []string

func (s *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = stringList{n.Value}
		return nil
	}
	var v []string
	if err := n.Decode(&v); err != nil {
		return err
	}
	*s = v
	return nil
}

func checkKeys(n *yaml.Node, allowed ...string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: expected a map", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ok := false
		for _, a := range allowed {
			if k.Value == a {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("line %d: unknown key %q (allowed: %s)", k.Line, k.Value, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// parsedFile is one decoded registry file.
type parsedFile struct {
	path   string
	groups []rawGroup
}

// readFiles decodes every *.yaml and *.yml file under root in fsys, in
// lexical path order.
func readFiles(fsys fs.FS, root string) ([]parsedFile, error) {
	var paths []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (path.Ext(p) == ".yaml" || path.Ext(p) == ".yml") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read registry %q: %w", root, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("read registry %q: no .yaml files found", root)
	}
	sort.Strings(paths)
	var files []parsedFile
	var errs []error
	for _, p := range paths {
		f, err := parseFile(fsys, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	return files, errors.Join(errs...)
}

func parseFile(fsys fs.FS, p string) (parsedFile, error) {
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		return parsedFile{}, fmt.Errorf("%s: %w", p, err)
	}
	var raw rawFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return parsedFile{}, yamlError(p, err)
	}
	// A second pass over the node tree gives line numbers for the messages.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return parsedFile{}, fmt.Errorf("%s: %w", p, err)
	}
	if gs := mapValue(docNode(&root), "groups"); gs != nil && gs.Kind == yaml.SequenceNode {
		for i, g := range gs.Content {
			if i >= len(raw.Groups) {
				break
			}
			raw.Groups[i].line = g.Line
			if as := mapValue(g, "attributes"); as != nil && as.Kind == yaml.SequenceNode {
				for j, a := range as.Content {
					if j < len(raw.Groups[i].Attributes) {
						raw.Groups[i].Attributes[j].line = a.Line
					}
				}
			}
		}
	}
	return parsedFile{path: p, groups: raw.Groups}, nil
}

var (
	yamlLineRe     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownFieldRe = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
)

// yamlError rewrites a YAML decoding error as one "file:line: message" line
// per problem.
func yamlError(file string, err error) error {
	var errs []error
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasSuffix(l, "unmarshal errors:") {
			continue
		}
		if m := yamlLineRe.FindStringSubmatch(l); m != nil {
			msg := m[2]
			if f := unknownFieldRe.FindStringSubmatch(msg); f != nil {
				msg = fmt.Sprintf("unknown key %q", f[1])
			}
			errs = append(errs, fmt.Errorf("%s:%s: %s", file, m[1], msg))
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s", file, strings.TrimPrefix(l, "yaml: ")))
	}
	if len(errs) == 0 {
		return fmt.Errorf("%s: %w", file, err)
	}
	return errors.Join(errs...)
}

func docNode(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0]
	}
	return n
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
