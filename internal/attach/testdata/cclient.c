// A C client of ONNX Runtime's C API for attach's tests: it reads the
// model into memory, creates its session with CreateSessionFromArray, says
// "ready", waits for a line on stdin, then runs the Silero VAD model N
// times with Run and N times with RunWithBinding, says "done" and exits.
//
// Usage: cclient MODEL N
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onnxruntime_c_api.h"

static const OrtApi* api;

static void check(OrtStatus* st, const char* what) {
	if (st != NULL) {
		fprintf(stderr, "%s: %s\n", what, api->GetErrorMessage(st));
		exit(1);
	}
}

int main(int argc, char** argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: cclient MODEL N\n");
		return 2;
	}
	int n = atoi(argv[2]);
	api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
	FILE* f = fopen(argv[1], "rb");
	if (f == NULL) {
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	void* model = malloc(size);
	if (fread(model, 1, size, f) != (size_t)size) {
		fprintf(stderr, "short read\n");
		return 1;
	}
	fclose(f);

	OrtEnv* env;
	OrtSessionOptions* opts;
	OrtSession* sess;
	check(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "cclient", &env), "CreateEnv");
	check(api->CreateSessionOptions(&opts), "CreateSessionOptions");
	check(api->SetIntraOpNumThreads(opts, 1), "SetIntraOpNumThreads");
	char line[64];
	printf("ready\n");
	fflush(stdout);
	if (fgets(line, sizeof line, stdin) == NULL) {
		return 1;
	}
	check(api->CreateSessionFromArray(env, model, size, opts, &sess), "CreateSessionFromArray");

	OrtMemoryInfo* mem;
	check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "CreateCpuMemoryInfo");
	float input[512] = {0}, state[256] = {0};
	int64_t sr = 16000;
	int64_t in_shape[] = {1, 512}, st_shape[] = {2, 1, 128};
	OrtValue *in_v, *st_v, *sr_v;
	check(api->CreateTensorWithDataAsOrtValue(mem, input, sizeof input, in_shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in_v), "input");
	check(api->CreateTensorWithDataAsOrtValue(mem, state, sizeof state, st_shape, 3, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &st_v), "state");
	check(api->CreateTensorWithDataAsOrtValue(mem, &sr, sizeof sr, NULL, 0, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, &sr_v), "sr");
	const char* in_names[] = {"input", "state", "sr"};
	const char* out_names[] = {"output", "stateN"};
	const OrtValue* ins[] = {in_v, st_v, sr_v};

	for (int i = 0; i < n; i++) {
		OrtValue* outs[2] = {NULL, NULL};
		check(api->Run(sess, NULL, in_names, ins, 3, out_names, 2, outs), "Run");
		api->ReleaseValue(outs[0]);
		api->ReleaseValue(outs[1]);
	}
	OrtIoBinding* b;
	check(api->CreateIoBinding(sess, &b), "CreateIoBinding");
	for (int i = 0; i < 3; i++) {
		check(api->BindInput(b, in_names[i], ins[i]), "BindInput");
	}
	check(api->BindOutputToDevice(b, "output", mem), "BindOutputToDevice");
	check(api->BindOutputToDevice(b, "stateN", mem), "BindOutputToDevice");
	for (int i = 0; i < n; i++) {
		check(api->RunWithBinding(sess, NULL, b), "RunWithBinding");
	}
	api->ReleaseIoBinding(b);
	api->ReleaseSession(sess);
	printf("done\n");
	fflush(stdout);
	return 0;
}
