package liveview

import "time"

// ring is a bounded history of samples, oldest overwritten first.
type ring struct {
	buf  []sample
	next int
	full bool
}

func newRing(n int) *ring {
	if n < 2 {
		n = 2
	}
	return &ring{buf: make([]sample, n)}
}

func (r *ring) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

func (r *ring) push(s sample) {
	r.buf[r.next] = s
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

// get returns the i-th sample, 0 the oldest.
func (r *ring) get(i int) *sample {
	if r.full {
		return &r.buf[(r.next+i)%len(r.buf)]
	}
	return &r.buf[i]
}

func (r *ring) oldest() (*sample, bool) {
	if r.len() == 0 {
		return nil, false
	}
	return r.get(0), true
}

func (r *ring) newest() (*sample, bool) {
	n := r.len()
	if n == 0 {
		return nil, false
	}
	return r.get(n - 1), true
}

// at returns the newest sample taken at or before t; false when every
// sample is newer (the history does not reach back to t).
func (r *ring) at(t time.Time) (*sample, bool) {
	lo, hi := 0, r.len() // binary search: samples are in time order
	for lo < hi {
		mid := (lo + hi) / 2
		if r.get(mid).at.After(t) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == 0 {
		return nil, false
	}
	return r.get(lo - 1), true
}

func (r *ring) each(f func(*sample)) {
	for i := 0; i < r.len(); i++ {
		f(r.get(i))
	}
}
