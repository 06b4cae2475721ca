package onnxgen

// prng is SplitMix64: tiny, fast and fully specified, so the weights of the
// ready-made models stay the same across Go releases and platforms.
type prng struct{ state uint64 }

func newPRNG(seed uint64) *prng { return &prng{state: seed} }

func (r *prng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform returns a float32 drawn uniformly from [-scale, scale). The 24
// random bits are exact in float32.
func (r *prng) uniform(scale float32) float32 {
	u := float32(r.next()>>40) / (1 << 23) // [0, 2)
	return (u - 1) * scale
}

// fill returns n values drawn uniformly from [-scale, scale).
func (r *prng) fill(n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.uniform(scale)
	}
	return v
}
