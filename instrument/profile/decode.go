package profile

// This file maps the keys of one trace event onto Event. Keys the Reader does
// not know are skipped, at every level.

// Keys of an event and of its args.
const (
	keyUnknown = iota
	keyCat
	keyName
	keyPh
	keyPID
	keyTID
	keyTS
	keyDur
	keyArgs

	keyOpName
	keyProvider
	keyNodeIndex
	keyActivationSize
	keyParameterSize
	keyOutputSize
	keyInputTypeShape
	keyOutputTypeShape
	keyThreadStats
	keyMemArenaHeld
	keyMemArenaHeldDelta
	keyMemBytesInUse
	keyMemInUseDelta
	keyMemInUsePeak
	keyMemRequestedInUse
	keyMemRequestedInUseDelta

	keyMainThread
	keySubThreads
	keyPoolName
	keyBlockSize
	keyDistribution
	keyDistributionEnqueue
	keyRun
	keyWait
	keyWaitRevoke
	keyNumRun
	keyCore
)

// eventKey maps a key of the event object.
func eventKey(k []byte) int {
	switch string(k) {
	case "cat":
		return keyCat
	case "name":
		return keyName
	case "ph":
		return keyPh
	case "pid":
		return keyPID
	case "tid":
		return keyTID
	case "ts":
		return keyTS
	case "dur":
		return keyDur
	case "args":
		return keyArgs
	}
	return keyUnknown
}

// argsKey maps a key of an event's args.
func argsKey(k []byte) int {
	switch string(k) {
	case "op_name":
		return keyOpName
	case "provider":
		return keyProvider
	case "node_index":
		return keyNodeIndex
	case "activation_size":
		return keyActivationSize
	case "parameter_size":
		return keyParameterSize
	case "output_size":
		return keyOutputSize
	case "input_type_shape":
		return keyInputTypeShape
	case "output_type_shape":
		return keyOutputTypeShape
	case "thread_scheduling_stats":
		return keyThreadStats
	case "mem_arena_held":
		return keyMemArenaHeld
	case "mem_arena_held_delta":
		return keyMemArenaHeldDelta
	case "mem_bytes_in_use":
		return keyMemBytesInUse
	case "mem_in_use_delta":
		return keyMemInUseDelta
	case "mem_in_use_peak":
		return keyMemInUsePeak
	case "mem_bytes_requested_in_use":
		return keyMemRequestedInUse
	case "mem_requested_in_use_delta":
		return keyMemRequestedInUseDelta
	}
	return keyUnknown
}

// statsKey maps a key inside thread_scheduling_stats (all levels).
func statsKey(k []byte) int {
	switch string(k) {
	case "main_thread":
		return keyMainThread
	case "sub_threads":
		return keySubThreads
	case "thread_pool_name":
		return keyPoolName
	case "block_size":
		return keyBlockSize
	case "Distribution":
		return keyDistribution
	case "DistributionEnqueue":
		return keyDistributionEnqueue
	case "Run":
		return keyRun
	case "Wait":
		return keyWait
	case "WaitRevoke":
		return keyWaitRevoke
	case "num_run":
		return keyNumRun
	case "core":
		return keyCore
	}
	return keyUnknown
}

// parseEvent reads the members of an event object whose '{' was consumed.
func (r *Reader) parseEvent(e *Event) error {
	e.reset()
	for first := true; ; first = false {
		key, done, err := r.nextKey(first, "an event")
		if err != nil || done {
			return err
		}
		k := eventKey(key)
		switch k {
		case keyCat:
			e.Category, err = r.str("cat")
		case keyName:
			e.Name, err = r.str("name")
		case keyPh:
			e.Phase, err = r.str("ph")
		case keyPID:
			err = r.num(&e.PID, "pid")
		case keyTID:
			err = r.num(&e.TID, "tid")
		case keyTS:
			err = r.num(&e.TS, "ts")
		case keyDur:
			err = r.num(&e.Dur, "dur")
		case keyArgs:
			err = r.parseArgs(e)
		default:
			err = r.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// parseArgs reads an event's "args" object.
func (r *Reader) parseArgs(e *Event) error {
	if ok, err := r.open('{', "args"); !ok || err != nil {
		return err
	}
	for first := true; ; first = false {
		key, done, err := r.nextKey(first, "the event's args")
		if err != nil || done {
			return err
		}
		k := argsKey(key)
		switch k {
		case keyOpName:
			e.OpName, err = r.str("op_name")
		case keyProvider:
			e.Provider, err = r.str("provider")
		case keyNodeIndex:
			err = r.num(&e.NodeIndex, "node_index")
		case keyActivationSize:
			err = r.num(&e.ActivationSize, "activation_size")
		case keyParameterSize:
			err = r.num(&e.ParameterSize, "parameter_size")
		case keyOutputSize:
			err = r.num(&e.OutputSize, "output_size")
		case keyInputTypeShape:
			e.InputShapes = e.InputShapes[:0]
			err = r.shapes(&e.InputShapes, "input_type_shape")
		case keyOutputTypeShape:
			e.OutputShapes = e.OutputShapes[:0]
			err = r.shapes(&e.OutputShapes, "output_type_shape")
		case keyThreadStats:
			e.Threads = ThreadStats{SubThreads: e.Threads.SubThreads[:0]}
			err = r.threadStats(&e.Threads)
		case keyMemArenaHeld, keyMemArenaHeldDelta, keyMemBytesInUse, keyMemInUseDelta,
			keyMemInUsePeak, keyMemRequestedInUse, keyMemRequestedInUseDelta:
			err = r.memArg(&e.Memory, k)
		default:
			err = r.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// shapes reads a type-shape list: [{"float":[1,3,640,640]}, ...]. Each key
// of each object is one TypeShape.
func (r *Reader) shapes(dst *[]TypeShape, what string) error {
	if ok, err := r.open('[', what); !ok || err != nil {
		return err
	}
	for first := true; ; first = false {
		c, done, err := r.nextElem(first, what)
		if err != nil || done {
			return err
		}
		if c != '{' {
			if err := r.mismatch(c, what+" element", "an object"); err != nil {
				return err
			}
			continue
		}
		r.pos++
		for f := true; ; f = false {
			key, done, err := r.nextKey(f, what)
			if err != nil {
				return err
			}
			if done {
				break
			}
			ts := addShape(dst)
			ts.Type = r.strs.get(key)
			if err := r.dims(&ts.Dims); err != nil {
				return err
			}
		}
	}
}

// dims reads an array of dimensions; one that is not a number reads as -1.
func (r *Reader) dims(dst *[]int64) error {
	if ok, err := r.open('[', "a type-shape's dimensions"); !ok || err != nil {
		return err
	}
	for first := true; ; first = false {
		_, done, err := r.nextElem(first, "a type-shape's dimensions")
		if err != nil || done {
			return err
		}
		v := int64(-1)
		if err := r.num(&v, "a dimension"); err != nil {
			return err
		}
		*dst = append(*dst, v)
	}
}

// threadStats reads "thread_scheduling_stats".
//
// ORT writes an empty string instead of an object on some CPUs (seen with
// 1.24.3 on AMD EPYC): that is valid output meaning "no statistics", read as
// absent without a warning.
func (r *Reader) threadStats(ts *ThreadStats) error {
	if c, ok := r.peek(); ok && c == '"' {
		off := r.offset()
		if err := r.skipValue(); err != nil {
			return err
		}
		if r.offset()-off == 2 { // ""
			return nil
		}
		r.nwarn++
		if len(r.warnings) < MaxWarnings {
			r.warnings = append(r.warnings, Warning{Offset: off,
				Msg: `"thread_scheduling_stats" is a non-empty string, not an object: ignored`})
		}
		return nil
	}
	if ok, err := r.open('{', "thread_scheduling_stats"); !ok || err != nil {
		return err
	}
	ts.Present = true
	for first := true; ; first = false {
		key, done, err := r.nextKey(first, "thread_scheduling_stats")
		if err != nil || done {
			return err
		}
		k := statsKey(key)
		switch k {
		case keyMainThread:
			err = r.mainThread(ts)
		case keySubThreads:
			err = r.subThreads(ts)
		default:
			err = r.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// mainThread reads thread_scheduling_stats.main_thread.
func (r *Reader) mainThread(ts *ThreadStats) error {
	if ok, err := r.open('{', "main_thread"); !ok || err != nil {
		return err
	}
	for first := true; ; first = false {
		key, done, err := r.nextKey(first, "main_thread")
		if err != nil || done {
			return err
		}
		k := statsKey(key)
		switch k {
		case keyPoolName:
			ts.PoolName, err = r.str("thread_pool_name")
		case keyBlockSize:
			ts.BlockSizes, err = r.countElems("block_size")
		case keyDistribution:
			err = r.num(&ts.Distribution, "Distribution")
		case keyDistributionEnqueue:
			err = r.num(&ts.DistributionEnqueue, "DistributionEnqueue")
		case keyRun:
			err = r.num(&ts.Run, "Run")
		case keyWait:
			err = r.num(&ts.Wait, "Wait")
		case keyWaitRevoke:
			err = r.num(&ts.WaitRevoke, "WaitRevoke")
		default:
			err = r.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// subThreads reads thread_scheduling_stats.sub_threads: an object keyed by
// thread id.
func (r *Reader) subThreads(ts *ThreadStats) error {
	if ok, err := r.open('{', "sub_threads"); !ok || err != nil {
		return err
	}
	for first := true; ; first = false {
		key, done, err := r.nextKey(first, "sub_threads")
		if err != nil || done {
			return err
		}
		id := r.strs.get(key)
		ok, err := r.open('{', "sub_threads entry")
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		st := SubThread{ID: id, Core: -1}
		for f := true; ; f = false {
			key, done, err := r.nextKey(f, "a sub_threads entry")
			if err != nil {
				return err
			}
			if done {
				break
			}
			k := statsKey(key)
			switch k {
			case keyNumRun:
				err = r.num(&st.NumRun, "num_run")
			case keyCore:
				err = r.num(&st.Core, "core")
			default:
				err = r.skipValue()
			}
			if err != nil {
				return err
			}
		}
		ts.SubThreads = append(ts.SubThreads, st)
	}
}

// countElems skips an array and returns how many elements it held.
func (r *Reader) countElems(what string) (int, error) {
	if ok, err := r.open('[', what); !ok || err != nil {
		return 0, err
	}
	n := 0
	for first := true; ; first = false {
		_, done, err := r.nextElem(first, what)
		if err != nil || done {
			return n, err
		}
		if err := r.skipValue(); err != nil {
			return n, err
		}
		n++
	}
}

// memArg reads one of the allocator readings ORT 1.25+ writes per node
// (mem_arena_held, mem_in_use_delta, ...), as quoted or bare integers; the
// deltas may be negative.
func (r *Reader) memArg(m *Memory, k int) error {
	var dst *int64
	var what string
	switch k {
	case keyMemArenaHeld:
		dst, what = &m.ArenaHeld, "mem_arena_held"
	case keyMemArenaHeldDelta:
		dst, what = &m.ArenaHeldDelta, "mem_arena_held_delta"
	case keyMemBytesInUse:
		dst, what = &m.BytesInUse, "mem_bytes_in_use"
	case keyMemInUseDelta:
		dst, what = &m.InUseDelta, "mem_in_use_delta"
	case keyMemInUsePeak:
		dst, what = &m.InUsePeak, "mem_in_use_peak"
	case keyMemRequestedInUse:
		dst, what = &m.RequestedInUse, "mem_bytes_requested_in_use"
	default:
		dst, what = &m.RequestedInUseDelta, "mem_requested_in_use_delta"
	}
	const unset = -1 << 63
	v := int64(unset)
	if err := r.num(&v, what); err != nil {
		return err
	}
	if v != unset {
		*dst = v
		m.Present = true
	}
	return nil
}
