// Package hostbench holds the collection-cost benchmark of ortel's host
// receivers (receivers/cpu, receivers/memory, receivers/process) against
// go.opentelemetry.io/contrib/instrumentation/host, both measured in one
// `go test -bench` invocation:
//
//	go test -run '^$' -bench Collect -benchmem -count 5 ./receivers/internal/hostbench/
//
// It has no code of its own: see bench_test.go.
package hostbench
