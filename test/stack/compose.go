package stack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Compose is the part of a Compose file that the checks read.
type Compose struct {
	Services map[string]Service `yaml:"services"`
}

// Service is one Compose service. Volumes, ports and environment accept the
// short and the long syntax.
type Service struct {
	Image       string      `yaml:"image"`
	Build       yaml.Node   `yaml:"build"`
	Command     yaml.Node   `yaml:"command"`
	Profiles    []string    `yaml:"profiles"`
	Ports       []yaml.Node `yaml:"ports"`
	Volumes     []yaml.Node `yaml:"volumes"`
	Environment yaml.Node   `yaml:"environment"`
}

// LoadCompose reads and parses a Compose file.
func LoadCompose(path string) (*Compose, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read compose file: %w", err)
	}
	var c Compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("parse compose file %q: %w", path, err)
	}
	if len(c.Services) == 0 {
		return nil, fmt.Errorf("compose file %q has no services", path)
	}
	return &c, nil
}

// HasBuild reports whether the service is built from a Dockerfile.
func (s Service) HasBuild() bool { return !s.Build.IsZero() }

// ImageRef is an image reference split into repository, tag and digest.
type ImageRef struct {
	Repository, Tag, Digest string
}

// ParseImage splits an image reference such as
// "otel/opentelemetry-collector-contrib:0.155.0" or "repo@sha256:...".
// A registry host with a port ("host:5000/repo:tag") is handled.
func ParseImage(ref string) ImageRef {
	var r ImageRef
	if i := strings.Index(ref, "@"); i >= 0 {
		r.Digest = ref[i+1:]
		ref = ref[:i]
	}
	lastSlash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > lastSlash {
		r.Tag = ref[i+1:]
		ref = ref[:i]
	}
	r.Repository = ref
	return r
}

// Pinned reports why an image reference is not pinned to a fixed version,
// or nil when it is: it needs a digest or a tag other than "latest" (or a
// floating one such as "stable", "main" or "edge").
func (r ImageRef) Pinned() error {
	switch {
	case r.Repository == "":
		return errors.New("no image name")
	case r.Digest != "":
		return nil
	case r.Tag == "":
		return errors.New("no tag: it would pull latest")
	case slices.Contains([]string{"latest", "stable", "main", "master", "edge", "nightly", "dev"}, strings.ToLower(r.Tag)):
		return fmt.Errorf("tag %q moves over time", r.Tag)
	}
	return nil
}

// Port is one published port.
type Port struct {
	HostIP        string
	HostPort      int
	ContainerPort int
	Protocol      string // tcp unless given
}

// PublishedPorts returns the service's published ports.
func (s Service) PublishedPorts() ([]Port, error) {
	var out []Port
	for _, n := range s.Ports {
		var p Port
		var err error
		switch n.Kind {
		case yaml.ScalarNode:
			p, err = parseShortPort(n.Value)
		case yaml.MappingNode:
			var long struct {
				Target    int    `yaml:"target"`
				Published string `yaml:"published"`
				HostIP    string `yaml:"host_ip"`
				Protocol  string `yaml:"protocol"`
			}
			if err = n.Decode(&long); err == nil {
				p = Port{HostIP: long.HostIP, ContainerPort: long.Target, Protocol: long.Protocol}
				if long.Published != "" {
					p.HostPort, err = strconv.Atoi(long.Published)
				}
			}
		default:
			err = errors.New("neither a string nor a mapping")
		}
		if err != nil {
			return nil, fmt.Errorf("port entry at line %d: %w", n.Line, err)
		}
		if p.Protocol == "" {
			p.Protocol = "tcp"
		}
		out = append(out, p)
	}
	return out, nil
}

// parseShortPort parses [HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTO].
func parseShortPort(s string) (Port, error) {
	var p Port
	spec := s
	if i := strings.LastIndex(spec, "/"); i >= 0 {
		p.Protocol = spec[i+1:]
		spec = spec[:i]
	}
	parts := strings.Split(spec, ":")
	num := func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 65535 {
			return 0, fmt.Errorf("port %q in %q is not a single port number", v, s)
		}
		return n, nil
	}
	var err error
	switch len(parts) {
	case 1:
		p.ContainerPort, err = num(parts[0])
	case 2:
		if p.HostPort, err = num(parts[0]); err == nil {
			p.ContainerPort, err = num(parts[1])
		}
	case 3:
		p.HostIP = parts[0]
		if p.HostPort, err = num(parts[1]); err == nil {
			p.ContainerPort, err = num(parts[2])
		}
	default:
		err = fmt.Errorf("port %q: expected [HOST_IP:][HOST_PORT:]CONTAINER_PORT", s)
	}
	return p, err
}

// Mount is one volume entry of a service.
type Mount struct {
	Source   string // host path or named volume; "" for an anonymous volume
	Target   string
	ReadOnly bool
	Bind     bool // Source is a host path (starts with ".", "/" or "~")
}

// Mounts returns the service's volume entries.
func (s Service) Mounts() ([]Mount, error) {
	var out []Mount
	for _, n := range s.Volumes {
		var m Mount
		switch n.Kind {
		case yaml.ScalarNode:
			parts := strings.Split(n.Value, ":")
			switch len(parts) {
			case 1:
				m.Target = parts[0]
			case 2, 3:
				m.Source, m.Target = parts[0], parts[1]
				if len(parts) == 3 {
					m.ReadOnly = slices.Contains(strings.Split(parts[2], ","), "ro")
				}
			default:
				return nil, fmt.Errorf("volume %q at line %d: expected SOURCE:TARGET[:MODE]", n.Value, n.Line)
			}
		case yaml.MappingNode:
			var long struct {
				Type     string `yaml:"type"`
				Source   string `yaml:"source"`
				Target   string `yaml:"target"`
				ReadOnly bool   `yaml:"read_only"`
			}
			if err := n.Decode(&long); err != nil {
				return nil, fmt.Errorf("volume at line %d: %w", n.Line, err)
			}
			m = Mount{Source: long.Source, Target: long.Target, ReadOnly: long.ReadOnly}
		default:
			return nil, fmt.Errorf("volume at line %d: neither a string nor a mapping", n.Line)
		}
		m.Bind = strings.HasPrefix(m.Source, ".") || strings.HasPrefix(m.Source, "/") || strings.HasPrefix(m.Source, "~")
		out = append(out, m)
	}
	return out, nil
}

// HostPath resolves a bind mount's source against the folder of the compose file.
func (m Mount) HostPath(composeDir string) string {
	if filepath.IsAbs(m.Source) {
		return m.Source
	}
	return filepath.Join(composeDir, m.Source)
}

// Env returns the service's environment as a map (list or map syntax).
func (s Service) Env() (map[string]string, error) {
	env := map[string]string{}
	switch s.Environment.Kind {
	case 0:
	case yaml.MappingNode:
		if err := s.Environment.Decode(&env); err != nil {
			return nil, fmt.Errorf("environment at line %d: %w", s.Environment.Line, err)
		}
	case yaml.SequenceNode:
		var list []string
		if err := s.Environment.Decode(&list); err != nil {
			return nil, fmt.Errorf("environment at line %d: %w", s.Environment.Line, err)
		}
		for _, kv := range list {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	default:
		return nil, fmt.Errorf("environment at line %d: neither a list nor a mapping", s.Environment.Line)
	}
	return env, nil
}

// Args returns the service's command as a list of arguments (a string
// command is split on spaces, as Compose does without a shell).
func (s Service) Args() ([]string, error) {
	switch s.Command.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		return strings.Fields(s.Command.Value), nil
	case yaml.SequenceNode:
		var args []string
		if err := s.Command.Decode(&args); err != nil {
			return nil, fmt.Errorf("command at line %d: %w", s.Command.Line, err)
		}
		return args, nil
	}
	return nil, fmt.Errorf("command at line %d: neither a string nor a list", s.Command.Line)
}
