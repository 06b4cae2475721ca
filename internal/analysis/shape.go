package analysis

import (
	"fmt"
	"strconv"
	"strings"
)

// Shape is a tensor's element type and dimensions as ONNX Runtime's
// profiler records them, e.g. "float[1,3,640,640]".
type Shape struct {
	Type string
	Dims []int64
}

// ParseShape parses the profiler's "type[d0,d1,...]" form. A scalar is
// "float[]".
func ParseShape(s string) (Shape, error) {
	i := strings.IndexByte(s, '[')
	if i <= 0 || !strings.HasSuffix(s, "]") {
		return Shape{}, fmt.Errorf("shape %q: want the form type[d0,d1,...]", s)
	}
	sh := Shape{Type: s[:i]}
	body := s[i+1 : len(s)-1]
	if body == "" {
		return sh, nil
	}
	for _, p := range strings.Split(body, ",") {
		d, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || d < 0 {
			return Shape{}, fmt.Errorf("shape %q: dimension %q is not a size", s, p)
		}
		sh.Dims = append(sh.Dims, d)
	}
	return sh, nil
}

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s.Dims) }

// Numel is the number of elements (1 for a scalar), as a float64 so large
// products do not overflow.
func (s Shape) Numel() float64 {
	n := 1.0
	for _, d := range s.Dims {
		n *= float64(d)
	}
	return n
}

// Dim returns dimension i, counting from the end when i is negative; it
// returns -1 when there is no such dimension.
func (s Shape) Dim(i int) int64 {
	if i < 0 {
		i += len(s.Dims)
	}
	if i < 0 || i >= len(s.Dims) {
		return -1
	}
	return s.Dims[i]
}

// String returns the profiler's form.
func (s Shape) String() string {
	parts := make([]string, len(s.Dims))
	for i, d := range s.Dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return s.Type + "[" + strings.Join(parts, ",") + "]"
}

func parseShapes(ss []string) ([]Shape, error) {
	out := make([]Shape, len(ss))
	for i, s := range ss {
		sh, err := ParseShape(s)
		if err != nil {
			return nil, err
		}
		out[i] = sh
	}
	return out, nil
}
