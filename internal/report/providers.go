package report

// Placement is where the operators of one profiled run ran: nodes and time
// per execution provider, the nodes that fell back to the CPU when another
// provider was requested, and the memory-copy nodes ONNX Runtime inserted
// between devices (MemcpyFromHost, MemcpyToHost). Package internal/analysis
// computes it from Operators.Timeline; times are self times, so a node
// running a subgraph does not count its subgraph's nodes again.
type Placement struct {
	// Requested are the execution providers the session asked for, in
	// priority order (the CPU provider, always the last fallback, included).
	Requested []string `json:"requested"`
	// Nodes and TimeS cover every operator of the run.
	Nodes int     `json:"nodes"`
	TimeS float64 `json:"time_s"`
	// ByProvider has one row per provider the nodes ran on, most time
	// first. A provider of "" means the profile did not record it (the
	// DirectML provider writes node events without arguments).
	ByProvider []ProviderRow `json:"by_provider"`
	// Fallback lists the nodes that ran on the CPU although a provider
	// other than the CPU was requested; absent when only the CPU was.
	Fallback *Fallback `json:"fallback,omitempty"`
	// Copies are the memory-copy nodes between devices.
	Copies Copies `json:"copies"`
}

// ProviderRow is the nodes of one execution provider.
type ProviderRow struct {
	Provider string  `json:"provider"`
	Nodes    int     `json:"nodes"`
	TimeS    float64 `json:"time_s"`
	// Share is TimeS over the run's operator time.
	Share float64 `json:"share"`
}

// Fallback is the nodes that ran on the CPU while a non-CPU provider was
// requested. Memory copies are not counted (they are Copies), nor is shape
// arithmetic: nodes whose every output is an int64 tensor, which ONNX
// Runtime places on the CPU on purpose.
type Fallback struct {
	Nodes int     `json:"nodes"`
	TimeS float64 `json:"time_s"`
	Share float64 `json:"share"`
	// ShapeNodes counts the CPU nodes left out as shape arithmetic.
	ShapeNodes int `json:"shape_nodes"`
	// ByOpType has one row per op type that fell back, most time first.
	ByOpType []FallbackOp `json:"by_op_type"`
}

// FallbackOp is the fallback nodes of one op type.
type FallbackOp struct {
	OpType string  `json:"op_type"`
	Nodes  int     `json:"nodes"`
	TimeS  float64 `json:"time_s"`
	Share  float64 `json:"share"`
}

// Copies are the memory-copy nodes of the run. Bytes are what each node's
// output holds: the profile's output_size, else the size its output shape
// and element type give.
type Copies struct {
	Nodes int     `json:"nodes"`
	Bytes int64   `json:"bytes"`
	TimeS float64 `json:"time_s"`
	Share float64 `json:"share"`
	// UnknownBytesNodes counts copies whose size the profile gives neither
	// way; Bytes leaves them out.
	UnknownBytesNodes int `json:"unknown_bytes_nodes,omitempty"`
	// ByKind has one row per (op type, provider), most time first.
	ByKind []CopyKind `json:"by_kind"`
	// List is every copy node of the run, in timeline order.
	List []CopyNode `json:"list"`
}

// CopyKind aggregates the copies of one op type and provider.
type CopyKind struct {
	OpType string `json:"op_type"`
	// Direction is "host_to_device" (MemcpyFromHost), "device_to_host"
	// (MemcpyToHost) or "other".
	Direction string  `json:"direction"`
	Provider  string  `json:"provider"`
	Nodes     int     `json:"nodes"`
	Bytes     int64   `json:"bytes"`
	TimeS     float64 `json:"time_s"`
	Share     float64 `json:"share"`
	// BytesPerS is Bytes over TimeS; 0 when either is.
	BytesPerS float64 `json:"bytes_per_s"`
}

// CopyNode is one memory-copy node of the run.
type CopyNode struct {
	Name      string `json:"name"`
	OpType    string `json:"op_type"`
	Direction string `json:"direction"`
	Provider  string `json:"provider"`
	// Shape is the copied tensor, e.g. "float[1,3,640,640]".
	Shape string `json:"shape,omitempty"`
	// Bytes is -1 when the profile gives the size neither way.
	Bytes  int64   `json:"bytes"`
	StartS float64 `json:"start_s"`
	DurS   float64 `json:"dur_s"`
}
