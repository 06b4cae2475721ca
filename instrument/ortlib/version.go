package ortlib

import (
	"fmt"
	"strconv"
	"strings"
)

// MinVersion is the oldest ONNX Runtime release ortel can load: the Go
// binding asks for C API version 24, which ONNX Runtime has from 1.24 on.
const MinVersion = "1.24.0"

// CheckVersion says whether ortel can use ONNX Runtime release v. It returns
// an error for a release older than MinVersion (loading it would fail), a
// note for a release ortel is not tested with (it should work: the C API
// only grows), and "", nil for a tested release (same major.minor as one of
// SupportedVersions). An empty or unreadable v gets a note, not an error.
func CheckVersion(v string) (note string, err error) {
	got, ok := parseVersion(v)
	if !ok {
		return "version unknown (not in the file name or package metadata); ortel loads 1.24 and later", nil
	}
	minv, _ := parseVersion(MinVersion)
	if compareVersions(got, minv) < 0 {
		return "", fmt.Errorf("ONNX Runtime %s is older than %s, the oldest ortel can load (its Go binding needs C API 24); tested: %s",
			v, strings.TrimSuffix(MinVersion, ".0"), strings.Join(SupportedVersions, ", "))
	}
	for _, s := range SupportedVersions {
		sv, _ := parseVersion(s)
		if got[0] == sv[0] && got[1] == sv[1] {
			return "", nil
		}
	}
	newest, _ := parseVersion(SupportedVersions[0])
	if compareVersions(got, newest) > 0 {
		return fmt.Sprintf("ONNX Runtime %s is newer than ortel is tested with (%s); it should work", v, strings.Join(SupportedVersions, ", ")), nil
	}
	return fmt.Sprintf("ONNX Runtime %s is not one ortel is tested with (%s); it should work", v, strings.Join(SupportedVersions, ", ")), nil
}

// parseVersion reads "1.20.1" (also "1.21.0rc1", "1.20") into three numbers.
func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 3)
	if len(parts) < 2 {
		return out, false
	}
	for i, p := range parts {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 {
			return out, false
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
