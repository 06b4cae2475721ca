//go:build linux && cgo

package attach

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

static const unsigned min_api = 5;

// The start of ORT's OrtApiBase: two function pointers (onnxruntime_c_api.h).
typedef struct {
	const void* (*GetApi)(uint32_t version);
	const char* (*GetVersionString)(void);
} ortel_api_base;

typedef const ortel_api_base* (*ortel_get_api_base)(void);

// ortel_resolve loads the library at path, asks it for its C API table and
// copies the function pointers at the n indexes idx into out, and the load
// base of the library into *base. It returns NULL or an error message
// (static or from dlerror; not to be freed).
static const char* ortel_resolve(const char* path, const int* idx, int n,
		uintptr_t* out, uintptr_t* base, char* version, size_t version_len) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		return e ? e : "dlopen failed";
	}
	ortel_get_api_base get = (ortel_get_api_base)dlsym(h, "OrtGetApiBase");
	if (get == NULL) {
		return "the library does not export OrtGetApiBase";
	}
	const ortel_api_base* b = get();
	if (b == NULL || b->GetApi == NULL) {
		return "OrtGetApiBase returned no API base";
	}
	// The API version of ONNX Runtime 1.N is N. GetApi prints to stderr
	// when asked for a version it does not know, so ask for exactly its own.
	const char* ver = b->GetVersionString ? b->GetVersionString() : "";
	unsigned major = 0, minor = 0;
	if (ver == NULL || sscanf(ver, "%u.%u", &major, &minor) != 2 || major != 1) {
		return "the library's version string is not 1.N";
	}
	if (minor < min_api) {
		return "the library is older than ONNX Runtime 1.5";
	}
	const void* api = b->GetApi(minor);
	if (api == NULL) {
		return "GetApi returned no table for the library's own version";
	}
	strncpy(version, ver ? ver : "", version_len - 1);
	version[version_len - 1] = 0;
	Dl_info info;
	if (dladdr((const void*)get, &info) == 0 || info.dli_fbase == NULL) {
		return "dladdr cannot place OrtGetApiBase";
	}
	*base = (uintptr_t)info.dli_fbase;
	const uintptr_t* table = (const uintptr_t*)api;
	for (int i = 0; i < n; i++) {
		out[i] = table[idx[i]];
	}
	// The library stays loaded: unloading ORT is not safe (its static
	// destructors and thread pools), and the handle is cached by build id.
	return NULL;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// apiTable loads the library at path into this process and returns the
// addresses of the entries at idx of its OrtApi table, relative to the
// library's load base (virtual addresses as in the ELF file), and the
// library's version string.
func apiTable(path string, idx []int) (vaddrs []uint64, version string, err error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	cidx := make([]C.int, len(idx))
	for i, v := range idx {
		cidx[i] = C.int(v)
	}
	out := make([]C.uintptr_t, len(idx))
	var base C.uintptr_t
	var ver [64]C.char
	if msg := C.ortel_resolve(cpath, &cidx[0], C.int(len(idx)), &out[0], &base, &ver[0], C.size_t(len(ver))); msg != nil {
		return nil, "", errors.New(C.GoString(msg))
	}
	vaddrs = make([]uint64, len(idx))
	for i, a := range out {
		if a == 0 || uint64(a) < uint64(base) {
			return nil, "", fmt.Errorf("OrtApi entry %d is %#x, below the load base %#x", idx[i], uint64(a), uint64(base))
		}
		vaddrs[i] = uint64(a) - uint64(base)
	}
	return vaddrs, C.GoString(&ver[0]), nil
}
