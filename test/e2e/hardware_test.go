package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProbeHardware(t *testing.T) {
	mk := func(t *testing.T, root string, files map[string]string) {
		t.Helper()
		for p, text := range files {
			full := filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name  string
		files map[string]string
		want  Hardware
	}{
		{"nothing", nil, Hardware{}},
		{"rapl", map[string]string{"sys/class/powercap/intel-rapl:0/energy_uj": "123\n"}, Hardware{RAPL: true}},
		{"empty rapl file", map[string]string{"sys/class/powercap/intel-rapl:0/energy_uj": ""}, Hardware{}},
		{"gpu", map[string]string{"proc/driver/nvidia/version": "NVRM version: 550\n"}, Hardware{GPU: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mk(t, root, tt.files)
			if got := ProbeHardware(root); got != tt.want {
				t.Errorf("ProbeHardware = %+v, want %+v", got, tt.want)
			}
		})
	}
}
