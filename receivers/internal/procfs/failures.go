package procfs

import "errors"

// Failures remembers which readings are failing, so that a receiver
// reports a persistent failure once instead of on every collection, and
// reports it again if the reading recovers and then fails anew.
//
// Readings are numbered by the caller (small integers). The zero value is
// ready to use; it is not safe for concurrent use.
type Failures struct {
	failing []bool
	errs    []error
}

// First marks reading id as failing and reports whether it was not failing
// before, that is whether the failure is news that should be reported.
// Build the error only when First returns true, so a persistent failure
// costs no allocation.
func (f *Failures) First(id int) bool {
	if id >= len(f.failing) {
		f.failing = append(f.failing, make([]bool, id+1-len(f.failing))...)
	}
	if f.failing[id] {
		return false
	}
	f.failing[id] = true
	return true
}

// Fail marks reading id as failing with err, which Err returns if the
// reading was not failing before.
func (f *Failures) Fail(id int, err error) {
	if f.First(id) {
		f.errs = append(f.errs, err)
	}
}

// Report adds err to the errors Err returns. Use it after First returned
// true.
func (f *Failures) Report(err error) { f.errs = append(f.errs, err) }

// OK marks reading id as working again.
func (f *Failures) OK(id int) {
	if id < len(f.failing) {
		f.failing[id] = false
	}
}

// Failing reports whether reading id is marked failing.
func (f *Failures) Failing(id int) bool { return id < len(f.failing) && f.failing[id] }

// Err returns the failures reported since the previous Err, joined, or nil.
func (f *Failures) Err() error {
	if len(f.errs) == 0 {
		return nil
	}
	err := errors.Join(f.errs...)
	clear(f.errs)
	f.errs = f.errs[:0]
	return err
}
