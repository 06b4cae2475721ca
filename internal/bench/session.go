package bench

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/report"
)

// SessionOptions are the ONNX Runtime session options bench sets beyond
// threads. The zero value leaves every one at ONNX Runtime's default.
type SessionOptions struct {
	// OptLevel is the graph optimization level: disable, basic, extended
	// or all ("" leaves ONNX Runtime's default, all).
	OptLevel string
	// ExecutionMode is sequential or parallel ("" leaves the default,
	// sequential).
	ExecutionMode string
	// SaveOptimized, when set, is where ONNX Runtime writes the model after
	// its graph optimizations (its parent folder is created).
	SaveOptimized string
	// Config holds session configuration entries (AddSessionConfigEntry),
	// such as session.intra_op.allow_spinning=0.
	Config map[string]string
	// Providers are execution providers in order of preference, by the
	// names ParseProvider reads; the CPU provider is always the last
	// fallback. Empty: CPU only.
	Providers []Provider
	// ProviderOptions apply to the first provider other than CPU.
	ProviderOptions map[string]string
}

// Provider is an execution provider known to bench.
type Provider struct {
	// Name is ONNX Runtime's name, e.g. CUDAExecutionProvider.
	Name string
	// append adds it to session options; nil for CPU (always present).
	append func(o *ort.SessionOptions, opts map[string]string) error
}

// providerTable maps the names --provider accepts (lower case) to ONNX
// Runtime's provider names and the binding call that adds each.
var providerTable = map[string]Provider{
	"cpu":      {Name: "CPUExecutionProvider"},
	"cuda":     {Name: "CUDAExecutionProvider", append: appendCUDA},
	"tensorrt": {Name: "TensorrtExecutionProvider", append: appendTensorRT},
	"openvino": {Name: "OpenVINOExecutionProvider", append: func(o *ort.SessionOptions, m map[string]string) error {
		return o.AppendExecutionProviderOpenVINO(m)
	}},
	"coreml": {Name: "CoreMLExecutionProvider", append: func(o *ort.SessionOptions, m map[string]string) error {
		return o.AppendExecutionProviderCoreMLV2(m)
	}},
	"directml": {Name: "DmlExecutionProvider", append: appendDirectML},
	"xnnpack":  {Name: "XnnpackExecutionProvider", append: generic("XNNPACK")},
	"qnn":      {Name: "QNNExecutionProvider", append: generic("QNN")},
	"webgpu":   {Name: "WebGpuExecutionProvider", append: generic("WebGPU")},
	"vitisai":  {Name: "VitisAIExecutionProvider", append: generic("VitisAI")},
	"azure":    {Name: "AzureExecutionProvider", append: generic("AZURE")},
}

// providerAliases are further spellings of providerTable's keys.
var providerAliases = map[string]string{
	"trt": "tensorrt", "dml": "directml", "webgpuexecutionprovider": "webgpu",
}

func generic(name string) func(*ort.SessionOptions, map[string]string) error {
	return func(o *ort.SessionOptions, m map[string]string) error { return o.AppendExecutionProvider(name, m) }
}

// providerOptions are the options of a provider the binding configures
// through an object of its own (CUDA, TensorRT).
type providerOptions interface {
	Update(map[string]string) error
	Destroy() error
}

// appendWith appends a provider configured through its options object:
// newOpts makes it, m updates it, add appends the provider with it, and
// the object is destroyed after.
func appendWith[P providerOptions](newOpts func() (P, error), add func(*ort.SessionOptions, P) error) func(*ort.SessionOptions, map[string]string) error {
	return func(o *ort.SessionOptions, m map[string]string) error {
		c, err := newOpts()
		if err != nil {
			return err
		}
		defer c.Destroy()
		if len(m) > 0 {
			if err := c.Update(m); err != nil {
				return err
			}
		}
		return add(o, c)
	}
}

var (
	appendCUDA     = appendWith(ort.NewCUDAProviderOptions, (*ort.SessionOptions).AppendExecutionProviderCUDA)
	appendTensorRT = appendWith(ort.NewTensorRTProviderOptions, (*ort.SessionOptions).AppendExecutionProviderTensorRT)
)

func appendDirectML(o *ort.SessionOptions, m map[string]string) error {
	id := 0
	for k, v := range m {
		if k != "device_id" {
			return fmt.Errorf("the DirectML provider takes only the option device_id (got %q)", k)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("device_id %q is not a number", v)
		}
		id = n
	}
	return o.AppendExecutionProviderDirectML(id)
}

// ProviderNames lists the names ParseProvider accepts.
func ProviderNames() []string {
	out := slices.Sorted(maps.Keys(providerTable))
	return out
}

// ParseProvider reads a provider name: a short name (cpu, cuda, tensorrt,
// openvino, coreml, directml, xnnpack, qnn, webgpu, vitisai, azure; any
// case) or ONNX Runtime's own name (CUDAExecutionProvider).
func ParseProvider(s string) (Provider, error) {
	k := strings.ToLower(strings.TrimSpace(s))
	if a, ok := providerAliases[k]; ok {
		k = a
	}
	if p, ok := providerTable[k]; ok {
		return p, nil
	}
	for _, p := range providerTable {
		if strings.EqualFold(p.Name, s) {
			return p, nil
		}
	}
	return Provider{}, fmt.Errorf("unknown execution provider %q: bench knows %s (or ONNX Runtime's names, such as CUDAExecutionProvider)",
		s, strings.Join(ProviderNames(), ", "))
}

// ParseProviders reads a comma-separated list of providers in order of
// preference, as ParseProvider reads each ("" gives none: CPU only).
func ParseProviders(list string) ([]Provider, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []Provider
	for _, name := range strings.Split(list, ",") {
		p, err := ParseProvider(name)
		if err != nil {
			return nil, invalid("{Session.Providers} %q: %w", list, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseKeyValues reads KEY=VALUE entries into a map for field
// (Session.Config, Session.ProviderOptions); a key given twice is an
// error. No entries give nil.
func ParseKeyValues(field string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, invalid("{"+field+"} %q: want KEY=VALUE", kv)
		}
		if _, dup := out[k]; dup {
			return nil, invalid("{"+field+"}: %s given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// ParseOptLevel checks an --opt-level value.
func ParseOptLevel(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", "disable", "basic", "extended", "all":
		return v, nil
	}
	return "", invalid("{Session.OptLevel} %q: want disable, basic, extended or all", s)
}

// ParseExecutionMode checks an --execution-mode value.
func ParseExecutionMode(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", "sequential", "parallel":
		return v, nil
	}
	return "", invalid("{Session.ExecutionMode} %q: want sequential or parallel", s)
}

var optLevels = map[string]ort.GraphOptimizationLevel{
	"disable":  ort.GraphOptimizationLevelDisableAll,
	"basic":    ort.GraphOptimizationLevelEnableBasic,
	"extended": ort.GraphOptimizationLevelEnableExtended,
	"all":      ort.GraphOptimizationLevelEnableAll,
}

// validate checks the options before any session exists.
func (s *SessionOptions) validate() error {
	if _, err := ParseOptLevel(s.OptLevel); err != nil {
		return err
	}
	if _, err := ParseExecutionMode(s.ExecutionMode); err != nil {
		return err
	}
	if len(s.ProviderOptions) > 0 && s.accelerator() == nil {
		return invalid("{Session.ProviderOptions} applies to an execution provider other than cpu; name one with {Session.Providers}")
	}
	return nil
}

// accelerator is the first provider other than CPU, or nil.
func (s *SessionOptions) accelerator() *Provider {
	for i := range s.Providers {
		if s.Providers[i].append != nil {
			return &s.Providers[i]
		}
	}
	return nil
}

// checkAvailable compares the providers asked for with those the loaded
// library was built with.
func (s *SessionOptions) checkAvailable() error {
	if len(s.Providers) == 0 {
		return nil
	}
	avail, err := ortlib.AvailableProviders()
	if err != nil {
		return err
	}
	for _, p := range s.Providers {
		if !slices.Contains(avail, p.Name) {
			return fmt.Errorf("execution provider %s is not in this ONNX Runtime build (%s); available: %s",
				p.Name, ort.GetVersion(), strings.Join(avail, ", "))
		}
	}
	return nil
}

// apply sets the options on o; save says whether to set the optimized
// model path (only the measured sessions write it).
func (s *SessionOptions) apply(o *ort.SessionOptions, save bool) error {
	if s.OptLevel != "" {
		if err := o.SetGraphOptimizationLevel(optLevels[s.OptLevel]); err != nil {
			return invalid("{Session.OptLevel} %s: %w", s.OptLevel, err)
		}
	}
	switch s.ExecutionMode {
	case "sequential":
		if err := o.SetExecutionMode(ort.ExecutionModeSequential); err != nil {
			return invalid("{Session.ExecutionMode} sequential: %w", err)
		}
	case "parallel":
		if err := o.SetExecutionMode(ort.ExecutionModeParallel); err != nil {
			return invalid("{Session.ExecutionMode} parallel: %w", err)
		}
	}
	keys := slices.Sorted(maps.Keys(s.Config))
	for _, k := range keys {
		if err := o.AddSessionConfigEntry(k, s.Config[k]); err != nil {
			return invalid("{Session.Config} %s=%s: %w", k, s.Config[k], err)
		}
	}
	acc := s.accelerator()
	for i := range s.Providers {
		p := &s.Providers[i]
		if p.append == nil {
			continue
		}
		var opts map[string]string
		if p == acc {
			opts = s.ProviderOptions
		}
		if err := p.append(o, opts); err != nil {
			avail, _ := ortlib.AvailableProviders()
			return fmt.Errorf("execution provider %s: ONNX Runtime could not add it: %w (this build lists %s; a provider also needs its own library and device)",
				p.Name, err, strings.Join(avail, ", "))
		}
	}
	if save && s.SaveOptimized != "" {
		if err := os.MkdirAll(filepath.Dir(s.SaveOptimized), 0o755); err != nil {
			return invalid("{Session.SaveOptimized} %s: %w", s.SaveOptimized, err)
		}
		if err := o.SetOptimizedModelFilePath(s.SaveOptimized); err != nil {
			return invalid("{Session.SaveOptimized} %s: %w", s.SaveOptimized, err)
		}
	}
	return nil
}

// record is the options as report.json keeps them.
func (s *SessionOptions) record() *report.SessionOptions {
	r := &report.SessionOptions{
		OptLevel: s.OptLevel, ExecutionMode: s.ExecutionMode, SaveOptimized: s.SaveOptimized,
		Config: s.Config, ProviderOptions: s.ProviderOptions,
	}
	for _, p := range s.Providers {
		r.Providers = append(r.Providers, p.Name)
	}
	if r.OptLevel == "" {
		r.OptLevel = "all" // ONNX Runtime's default
	}
	if r.ExecutionMode == "" {
		r.ExecutionMode = "sequential"
	}
	return r
}

// runtimeProviders is the report's provider list: those asked for, then
// the CPU fallback.
func (s *SessionOptions) runtimeProviders() []string {
	var out []string
	for _, p := range s.Providers {
		if !slices.Contains(out, p.Name) {
			out = append(out, p.Name)
		}
	}
	if !slices.Contains(out, "CPUExecutionProvider") {
		out = append(out, "CPUExecutionProvider")
	}
	return out
}
