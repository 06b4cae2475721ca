package profile

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"io"
	"os"
)

// spillFile holds events that cannot be placed yet (no model_run encloses
// them so far) beyond what a Grouper keeps in memory. Each spill is a segment
// of gob-encoded events with the time span it covers, so a model_run reads
// back only the segments that overlap it.
type spillFile struct {
	dir  string
	f    *os.File
	end  int64
	segs []segment
	bw   *bufio.Writer
}

// offsetWriter writes to f at a moving offset.
type offsetWriter struct {
	f   *os.File
	off int64
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

type segment struct {
	off, size     int64
	n             int
	minTS, maxEnd int64
	live          bool
}

// write appends evs as one segment.
func (s *spillFile) write(evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "ortel-profile-spill-*")
		if err != nil {
			return fmt.Errorf("create a spill file for events not placed yet: %w", err)
		}
		s.f = f
	}
	g := segment{off: s.end, n: len(evs), minTS: evs[0].TS, maxEnd: evs[0].TS + evs[0].Dur, live: true}
	for i := range evs {
		g.minTS = min(g.minTS, evs[i].TS)
		g.maxEnd = max(g.maxEnd, evs[i].TS+evs[i].Dur)
	}
	// Streamed through a small buffer: a segment is never whole in memory.
	ow := &offsetWriter{f: s.f, off: s.end}
	if s.bw == nil {
		s.bw = bufio.NewWriterSize(ow, 64<<10)
	} else {
		s.bw.Reset(ow)
	}
	err := gob.NewEncoder(s.bw).Encode(evs)
	if err == nil {
		err = s.bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("write spill file %s: %w", s.f.Name(), err)
	}
	g.size = ow.off - s.end
	s.end = ow.off
	s.segs = append(s.segs, g)
	return nil
}

// take reads back every live segment overlapping [lo, hi], hands each of
// its events that in accepts to keep, and spills the others again.
func (s *spillFile) take(in func(*Event) bool, keep func(*Event), lo, hi int64) error {
	n := len(s.segs)
	for i := 0; i < n; i++ {
		g := &s.segs[i]
		if !g.live || g.maxEnd < lo || g.minTS > hi {
			continue
		}
		var evs []Event
		if err := gob.NewDecoder(io.NewSectionReader(s.f, g.off, g.size)).Decode(&evs); err != nil {
			return fmt.Errorf("read spill file %s back: %w", s.f.Name(), err)
		}
		g.live = false
		rest := evs[:0]
		for j := range evs {
			e := &evs[j]
			if in(e) {
				keep(e)
			} else {
				rest = append(rest, *e)
			}
		}
		if err := s.write(rest); err != nil {
			return err
		}
	}
	// Drop dead segments from the index (their bytes stay in the file).
	live := s.segs[:0]
	for _, g := range s.segs {
		if g.live {
			live = append(live, g)
		}
	}
	s.segs = live
	return nil
}

// each reads back every live segment and calls fn with each event.
func (s *spillFile) each(fn func(*Event)) error {
	for _, g := range s.segs {
		if !g.live {
			continue
		}
		var evs []Event
		if err := gob.NewDecoder(io.NewSectionReader(s.f, g.off, g.size)).Decode(&evs); err != nil {
			return fmt.Errorf("read spill file %s back: %w", s.f.Name(), err)
		}
		for i := range evs {
			fn(&evs[i])
		}
	}
	return nil
}

// close removes the spill file.
func (s *spillFile) close() error {
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	s.f = nil
	return err
}
