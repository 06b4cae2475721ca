package fetch

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// npmDefault asks npm for the registry it would use when no variable or
// .npmrc names one: npm's built-in default lives in npm, and asking npm keeps
// ortel from carrying a registry address of its own. "" when npm is not
// installed or does not answer within a few seconds. A variable so tests can
// stand in for npm.
var npmDefault = func() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "config", "get", "registry").Output()
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(string(out))
	if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return v
}

// Registry is the npm registry a package is downloaded from, found the way
// npm finds it, and the token npm would send to it.
type Registry struct {
	// URL is the registry's base URL, ending in "/".
	URL string
	// From says where URL was configured: "npm_config_registry",
	// "/home/me/.npmrc", "npm's default".
	From string
	// token is the registry's _authToken from the same .npmrc files ("":
	// none); never printed.
	token string
}

// RegistryFor finds the registry of package pkg as npm does, first match
// winning: the environment (npm_config_@scope:registry, then
// npm_config_registry, either case), then the .npmrc files: the project's
// (the nearest .npmrc in the working directory or its parents), the user's
// ($NPM_CONFIG_USERCONFIG, default ~/.npmrc), the global one
// ($NPM_CONFIG_GLOBALCONFIG, /usr/local/etc/npmrc, /usr/etc/npmrc, /etc/npmrc);
// in each, a scoped "@scope:registry" for a scoped package before
// "registry"; else the registry npm itself reports (npm config get
// registry); else none: URL is "" and Fetch says how to name one. ${VAR} in
// a value is expanded.
// The registry's "//host/path/:_authToken" from the same files is sent as
// a bearer token.
func RegistryFor(pkg string) Registry {
	keys := []string{"registry"}
	if strings.HasPrefix(pkg, "@") {
		if scope, _, ok := strings.Cut(pkg, "/"); ok {
			keys = []string{scope + ":registry", "registry"}
		}
	}
	files := npmrcFiles()
	var reg Registry
	for _, k := range keys {
		if v, from := envConfig(k); v != "" {
			reg = Registry{URL: v, From: from}
			break
		}
		if v, from := fileConfig(files, k); v != "" {
			reg = Registry{URL: v, From: from}
			break
		}
	}
	if reg.URL == "" {
		if v := npmDefault(); v != "" {
			reg = Registry{URL: v, From: "npm config get registry"}
		}
	}
	if reg.URL == "" {
		return reg
	}
	if !strings.HasSuffix(reg.URL, "/") {
		reg.URL += "/"
	}
	reg.token = authToken(files, reg.URL)
	return reg
}

// TarballURL is where the registry serves the package's tarball:
// <registry><name>/-/<base name>-<version>.tgz, npm's layout (a scoped
// package keeps its scope in the first part only).
func (r Registry) TarballURL(a Artifact) string {
	base := a.Package
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	return r.URL + a.Package + "/-/" + base + "-" + a.Version + ".tgz"
}

// envConfig reads npm_config_<key> (npm reads either case).
func envConfig(key string) (string, string) {
	for _, name := range []string{"npm_config_" + key, "NPM_CONFIG_" + strings.ToUpper(key)} {
		if v := os.Getenv(name); v != "" {
			return expand(v), name
		}
	}
	return "", ""
}

// npmrc is one parsed .npmrc file.
type npmrc struct {
	path   string
	values map[string]string
}

// npmrcFiles reads the .npmrc files npm would, in precedence order.
func npmrcFiles() []npmrc {
	var paths []string
	if dir, err := os.Getwd(); err == nil {
		for {
			p := filepath.Join(dir, ".npmrc")
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				paths = append(paths, p)
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if v, _ := envConfig("userconfig"); v != "" {
		paths = append(paths, v)
	} else if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".npmrc"))
	}
	if v, _ := envConfig("globalconfig"); v != "" {
		paths = append(paths, v)
	} else {
		paths = append(paths, "/usr/local/etc/npmrc", "/usr/etc/npmrc", "/etc/npmrc")
	}
	var out []npmrc
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		if values := readNpmrc(p); values != nil {
			out = append(out, npmrc{path: p, values: values})
		}
	}
	return out
}

// readNpmrc parses key=value lines; ; and # start comments. nil when the
// file cannot be read.
func readNpmrc(path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	values := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		values[strings.TrimSpace(k)] = expand(v)
	}
	return values
}

func fileConfig(files []npmrc, key string) (string, string) {
	for _, f := range files {
		if v := f.values[key]; v != "" {
			return v, f.path
		}
	}
	return "", ""
}

// authToken finds "//host/path/:_authToken" for the registry URL, the
// longest matching path first as npm does.
func authToken(files []npmrc, registry string) string {
	u, err := url.Parse(registry)
	if err != nil {
		return ""
	}
	p := strings.TrimSuffix(u.Path, "/")
	for {
		key := "//" + u.Host + p + "/:_authToken"
		if v, _ := fileConfig(files, key); v != "" {
			return v
		}
		if p == "" {
			return ""
		}
		p = p[:strings.LastIndex(p, "/")]
	}
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} with the variable's value, as npm does in .npmrc.
func expand(v string) string {
	return envRef.ReplaceAllStringFunc(v, func(m string) string {
		return os.Getenv(m[2 : len(m)-1])
	})
}
