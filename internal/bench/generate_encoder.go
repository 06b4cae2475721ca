package bench

import (
	"fmt"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// encoderRun is the output of an encoder-decoder's encoder, run once so
// that --generate feeds its decoder real encoder states.
type encoderRun struct {
	states ort.Value // float [1, tokens, hidden]; owned by the caller
	input  string    // what the encoder was fed, for the report
	took   time.Duration
}

// runEncoder runs the encoder at path once on seeded inputs (the
// project's input synthesis: uniform [0, 1) for floats; dynamic sizes from
// shapes) and returns its first output.
func runEncoder(path string, shapes map[string][]int64, seed uint64) (*encoderRun, error) {
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("encoder %q is not a valid ONNX model: %w", path, err)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("encoder %q has no outputs", path)
	}
	in, err := Synthesize(ins, nil, shapes, nil, 1, seed)
	if err != nil {
		return nil, fmt.Errorf("encoder %q: %w", path, err)
	}
	defer in.Destroy()
	sess, err := ort.NewDynamicAdvancedSession(path, in.Names, []string{outs[0].Name}, nil)
	if err != nil {
		return nil, fmt.Errorf("encoder %q: create session: %w", path, err)
	}
	defer sess.Destroy()
	out := []ort.Value{nil}
	start := time.Now()
	if err := sess.Run(in.Values, out); err != nil {
		return nil, fmt.Errorf("encoder %q: run: %w", path, err)
	}
	took := time.Since(start)
	s := out[0].GetShape()
	if _, ok := out[0].(*ort.Tensor[float32]); !ok || len(s) != 3 || s[0] != 1 {
		out[0].Destroy()
		return nil, invalid("encoder %q: output %q has shape %v; {Generate} feeds float32 [1, sequence, hidden] states", path, outs[0].Name, s)
	}
	desc := ""
	for i, sp := range in.Specs {
		if i > 0 {
			desc += ", "
		}
		desc += fmt.Sprintf("%s %v", sp.Name, sp.Shape)
	}
	return &encoderRun{states: out[0], input: desc, took: took}, nil
}
