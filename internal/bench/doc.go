// Package bench is the engine of `ortel bench`: it loads a model, feeds it
// synthesized inputs, measures cold start, warm-up and latency under a load
// scenario with the instrumented session (run spans and metrics on), then
// profiles operators in a separate, bounded pass — latency is never
// measured with ORT's profiler on.
//
// # Phases
//
// A Run creates one short-lived profiled session to read how ONNX Runtime
// splits session creation (its model_loading_uri and session_initialization
// profiler events), creates the measured session(s), times the cold first
// run, warms up, runs the measured phase, and profiles operators. Each
// measured phase (the main one, every batch-sweep step, every SLA trial)
// runs between the HardwareSampler's Start and Stop.
//
// # Scenarios
//
//   - single-stream: one request at a time (closed loop).
//   - concurrent: N workers in closed loops, on one shared session or a
//     session each.
//   - server: an open loop. Arrival times are drawn up front (Poisson, seeded)
//     and a scheduler goroutine releases each request into a queue at its
//     time, whatever the workers are doing; N workers serve the queue in
//     order. A request's latency runs from its scheduled arrival to the end of
//     its run, so when the workers fall behind the queueing is in the
//     latencies: a stall delays every request due during it, as it would delay
//     real users, instead of pausing the load (coordinated omission). The
//     queue depth is the ortel.load.queue.depth instrument.
//   - offline: every request queued at once, N workers drain them; the
//     figure of merit is requests per second of wall time.
//
// # Methods
//
// SLA (--sla 20ms, or 20ms@p95): a request violates it when it takes longer
// than the threshold or fails. The verdict uses the nearest-rank percentile:
// met when at most n − ⌈P·n/100⌉ of n requests violate it (equivalently, the
// ⌈P·n/100⌉-th smallest latency, failures counted as infinitely slow, is
// within the threshold). Compliance is the fraction that did not violate it.
//
// Peak-rate search (server scenario with an SLA): each trial is an
// open-loop run and a sequential test (trialPhase): at least the requests
// its percentile needs for an early-stopping verdict with one over the
// threshold (662 for p99) or the trial duration's worth, then it ends once
// the verdict is met; a stray stall extends it (up to the size proving the
// SLA with 4 over) instead of failing it, and a fifth request over the
// threshold ends it as failed. Starting at --qps, or half the rate the
// workers sustain at the warm-up median, the rate doubles after each
// passing trial until one fails (halves after each failing one, repeated
// once, until one passes), then is bisected between the highest passing and
// lowest failing rate until they are within 5%; at most MaxTrials trials.
// The peak is the highest passing rate; every trial is reported (the
// report's searchMethod text says it all).
//
// Steady state (rolling-median stability): with windows of W = 10 runs and
// a tolerance of 5%, steady state starts at the first run j >= 1 (the first
// run is always cold) where the median of runs [j, j+W) and the median of
// runs [j+W, j+2W) differ by at most 5% of the former. Warm-up took j runs;
// seeing it took j + 2W. --warmup auto runs warm-up until the test passes
// (at most --warmup-max runs); with a fixed --warmup the test still runs over
// the warm-up curve and then the measured runs (single-stream), and the
// report says when steady state came only during measurement.
//
// Jitter: standard deviation, p99/p50, the largest and mean difference
// between consecutive requests, and outliers: latencies above
// p50 + 5·max(1.4826·MAD, 1% of p50), MAD being the median absolute
// deviation (1.4826·MAD estimates the standard deviation robustly), listed
// with their request number and start (or scheduled arrival) time.
//
// Batch sweep (--batch 1,2,4,8): each size is measured single-stream with
// its own inputs after its own warm-up. Speed-up is items/s over items/s of
// the smallest size; scaling efficiency is speed-up divided by the size ratio
// (1: a batch of b costs no more than the smallest; smallest/b: batching
// gains nothing). The best size has the most items/s among those meeting
// the SLA when one is given.
//
// Tuning sweep (--tune, Config.Tune): every combination of optimization
// level, intra-op thread count, execution mode and loadable execution
// provider gets its own session options and session (creation and first
// run timed per configuration; only the read-only input tensors are
// shared), a warm-up, and Config.Runs single-stream runs split into rounds
// that visit the configurations in a new shuffled order each, so drift
// during the sweep hits all alike. All sessions stay open for the sweep.
// Rows rank by p50 with its order-statistic interval; the best is told
// apart from the runner-up only when the intervals do not overlap. The
// report's latency, throughput and cold start are the best configuration's,
// and the operator pass profiles its session; ortel.load.request.duration
// records every configuration's runs alike.
//
// Generation (--generate N): each measured request is one greedy
// generation of N tokens on a decoder following the input_ids /
// attention_mask / past_key_values.<i>.key|value → logits /
// present.<i>.key|value convention: a prefill run over the prompt with
// empty caches, then one run per token feeding back the present tensors.
// The layout is read from the model: position_ids, num_logits_to_keep,
// the use_cache_branch of merged decoders, and the encoder_hidden_states
// and past_key_values.<i>.decoder|encoder.* of an encoder-decoder's
// decoder (Whisper, Moonshine), whose cross-attention cache stays the
// prefill's. instrument.Generations records time to first token, time per
// output token, token counts, tokens/s and the KV-cache size; the report
// adds the cache held after each step.
//
// # Telemetry
//
// Besides the instrumented sessions' own spans and metrics (package
// instrument), a Run records, on the configured MeterProvider:
//
//	name                                         instrument             unit          attributes
//	ortel.load.request.duration                  Float64Histogram       s             onnxruntime.model.name, ortel.load.scenario, error.type
//	ortel.load.queue.depth                       Int64UpDownCounter     {request}     onnxruntime.model.name, ortel.load.scenario
//	ortel.load.queue.wait                        Float64Histogram       s             onnxruntime.model.name, ortel.load.scenario
//	ortel.load.throughput                        Float64Gauge           {request}/s   onnxruntime.model.name, ortel.load.scenario
//	ortel.sla.violations                         Int64Counter           {request}     onnxruntime.model.name, ortel.load.scenario, ortel.sla.threshold, ortel.sla.percentile
//	ortel.sla.compliance                         Float64Gauge           1             (as violations)
//	ortel.sla.capacity                           Float64Gauge           {request}/s   onnxruntime.model.name, ortel.sla.threshold, ortel.sla.percentile
//	ortel.warmup.runs                            Int64Gauge             {run}         onnxruntime.model.name
//	ortel.warmup.duration                        Float64Histogram       s             onnxruntime.model.name
//	ortel.warmup.first_run.duration              Float64Histogram       s             onnxruntime.model.name
//	onnxruntime.session.load.duration            Float64Histogram       s             onnxruntime.model.name
//	onnxruntime.session.initialization.duration  Float64Histogram       s             onnxruntime.model.name
//	ortel.jitter.stddev                          Float64Gauge           s             onnxruntime.model.name, ortel.load.scenario
//	ortel.jitter.tail_ratio                      Float64Gauge           1             onnxruntime.model.name, ortel.load.scenario
//	ortel.jitter.max_delta                       Float64Gauge           s             onnxruntime.model.name, ortel.load.scenario
//	ortel.jitter.outliers                        Int64Counter           {request}     onnxruntime.model.name, ortel.load.scenario
//	ortel.batch.duration                         Float64Histogram       s             onnxruntime.model.name, ortel.batch.size
//	ortel.batch.throughput                       Float64Gauge           {item}/s      onnxruntime.model.name, ortel.batch.size
//	ortel.batch.scaling_efficiency               Float64Gauge           1             onnxruntime.model.name, ortel.batch.size
//
// With --generate, package instrument adds gen_ai.server.time_to_first_token,
// gen_ai.server.time_per_output_token and the ortel.generation.* metrics.
// docs/metrics.md, generated from the semconv registry, is the reference.
package bench
