package semgen

import "testing"

func TestGoName(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"onnxruntime.run.duration", "OnnxruntimeRunDuration"},
		{"hw.gpu.io", "HwGPUIO"},
		{"system.cpu.time", "SystemCPUTime"},
		{"process.pid", "ProcessPID"},
		{"gen_ai.server.time_to_first_token", "GenAIServerTimeToFirstToken"},
		{"nvidia.gpu.pcie.throughput", "NvidiaGPUPCIeThroughput"},
		{"nvidia.gpu.sm.occupancy", "NvidiaGPUSMOccupancy"},
		{"nvidia.gpu.dram.activity", "NvidiaGPUDRAMActivity"},
		{"ortel.perf.ipc", "OrtelPerfIPC"},
		{"onnxruntime.session.id", "OnnxruntimeSessionID"},
		{"hw.gpu.uuid", "HwGPUUUID"},
		{"host.os.type", "HostOSType"},
		{"ortel.sla.qps", "OrtelSLAQPS"},
		{"hw.errors.ecc", "HwErrorsECC"},
		{"ortel.report.json", "OrtelReportJSON"},
		{"http.request.method", "HTTPRequestMethod"},
		{"gen_ai.ttft", "GenAITTFT"},
		{"gen_ai.tpot", "GenAITPOT"},
		{"gen_ai.kv.cache", "GenAIKVCache"},
		{"process.context_switch.type", "ProcessContextSwitchType"},
		{"process.unix.file_descriptor.count", "ProcessUnixFileDescriptorCount"},
		{"ortel.load_average.window", "OrtelLoadAverageWindow"},
		{"cpu", "CPU"},
		{"1m", "1m"},
		{"high_critical", "HighCritical"},
		{"high.critical", "HighCritical"},
		{"a-b", "AB"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GoName(tt.name); got != tt.want {
				t.Errorf("GoName(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestValidIdent(t *testing.T) {
	tests := []struct {
		ident string
		want  bool
	}{
		{"HwGPUIO", true},
		{"OrtelLoadAverageWindow1m", true},
		{"1m", false},
		{"lower", false},
		{"", false},
		{"Has Space", false},
	}
	for _, tt := range tests {
		if got := validIdent(tt.ident); got != tt.want {
			t.Errorf("validIdent(%q) = %t, want %t", tt.ident, got, tt.want)
		}
	}
}
