package history

import "math"

// Student's t distribution, for the significance test and the magnitude
// interval of a change point. The regularized incomplete beta function is
// evaluated by its continued fraction (modified Lentz's method), accurate to
// about 1e-12 over the range a change-point test uses.

// tTwoSided is the two-sided p-value of t with df degrees of freedom:
// P(|T| >= |t|).
func tTwoSided(t, df float64) float64 {
	if math.IsNaN(t) || df <= 0 {
		return 1
	}
	if math.IsInf(t, 0) {
		return 0
	}
	x := df / (df + t*t)
	return regIncBeta(df/2, 0.5, x)
}

// tQuantile is the q-quantile (0 < q < 1) of Student's t with df degrees of
// freedom, found by bisection on the distribution function.
func tQuantile(q, df float64) float64 {
	if q == 0.5 {
		return 0
	}
	if q < 0.5 {
		return -tQuantile(1-q, df)
	}
	// Upper tail probability wanted: 1-q = p/2 of the two-sided p.
	want := 2 * (1 - q)
	lo, hi := 0.0, 1.0
	for tTwoSided(hi, df) > want {
		hi *= 2
		if hi > 1e8 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tTwoSided(mid, df) > want {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	// The continued fraction converges fast for x < (a+1)/(a+b+2); use the
	// symmetry I_x(a,b) = 1 - I_{1-x}(b,a) otherwise.
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF evaluates the continued fraction of the incomplete beta function
// (modified Lentz's method: each term aa updates d and c, and multiplies h
// by d*c).
func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1/nonzero(1-qab*x/qap)
	h := d
	// step takes the next term and returns the factor it multiplied h by.
	step := func(aa float64) float64 {
		d = 1 / nonzero(1+aa*d)
		c = nonzero(1 + aa/c)
		h *= d * c
		return d * c
	}
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		m2 := 2 * fm
		step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))
		if del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))); math.Abs(del-1) < 1e-14 {
			break
		}
	}
	return h
}
