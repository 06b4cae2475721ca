//go:build linux && cgo

package ortapi

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Only what this package calls is declared: the API base, which every ONNX
// Runtime version lays out the same way, and the table as an array of
// function pointers.
typedef struct OrtStatus OrtStatus;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct {
	const void* (*GetApi)(uint32_t version);
	const char* (*GetVersionString)(void);
} ortelApiBase;
typedef const ortelApiBase* (*ortelGetApiBaseFn)(void);
typedef OrtStatus* (*ortelEnableFn)(OrtRunOptions*, const char*);
typedef OrtStatus* (*ortelDisableFn)(OrtRunOptions*);
typedef const char* (*ortelErrorMessageFn)(const OrtStatus*);
typedef void (*ortelReleaseStatusFn)(OrtStatus*);

// Entries of the C API 1 table that never move: GetErrorMessage (index 2)
// and ReleaseStatus (index 93).
enum { ortelIdxGetErrorMessage = 2, ortelIdxReleaseStatus = 93 };

static ortelGetApiBaseFn ortelFound;

// ortelVisit looks for OrtGetApiBase in each object loaded in the process,
// reopening it without loading anything (RTLD_NOLOAD).
static int ortelVisit(struct dl_phdr_info* info, size_t size, void* data) {
	(void)size; (void)data;
	if (info->dlpi_name == NULL || info->dlpi_name[0] == 0) return 0;
	void* h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL) return 0;
	void* sym = dlsym(h, "OrtGetApiBase");
	dlclose(h);
	if (sym == NULL) return 0;
	ortelFound = (ortelGetApiBaseFn)sym;
	return 1;
}

static const void* const* ortelApi;

// ortelLoad finds the loaded library and its table at version want.
// It returns 0 on success, 1 when no ONNX Runtime is loaded, 2 when the
// library has no table of that version.
static int ortelLoad(uint32_t want, const char** ver) {
	ortelFound = NULL;
	dl_iterate_phdr(ortelVisit, NULL);
	if (ortelFound == NULL) return 1;
	const ortelApiBase* base = ortelFound();
	if (base == NULL) return 1;
	*ver = base->GetVersionString();
	ortelApi = (const void* const*)base->GetApi(want);
	if (ortelApi == NULL) return 2;
	return 0;
}

// ortelStatus turns an OrtStatus into a malloc'd message (NULL for success).
static char* ortelStatus(OrtStatus* st) {
	if (st == NULL) return NULL;
	const char* m = ((ortelErrorMessageFn)ortelApi[ortelIdxGetErrorMessage])(st);
	char* out = strdup(m ? m : "unknown ONNX Runtime error");
	((ortelReleaseStatusFn)ortelApi[ortelIdxReleaseStatus])(st);
	return out;
}

static char* ortelEnable(void* ro, const char* prefix, int idx) {
	return ortelStatus(((ortelEnableFn)ortelApi[idx])((OrtRunOptions*)ro, prefix));
}

static char* ortelDisable(void* ro, int idx) {
	return ortelStatus(((ortelDisableFn)ortelApi[idx])((OrtRunOptions*)ro));
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

func load() (string, error) {
	var ver *C.char
	rc := C.ortelLoad(C.uint32_t(APIVersion), &ver)
	v := ""
	if ver != nil {
		v = C.GoString(ver)
	}
	switch rc {
	case 0:
		return v, nil
	case 1:
		return "", fmt.Errorf("%w: no ONNX Runtime library is loaded in this process", ErrUnsupported)
	default:
		return v, fmt.Errorf("%w: the loaded ONNX Runtime is %s", ErrUnsupported, v)
	}
}

func statusErr(msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return errors.New("ONNX Runtime: " + C.GoString(msg))
}

func enable(ro unsafe.Pointer, prefix string) error {
	cp := C.CString(prefix)
	defer C.free(unsafe.Pointer(cp))
	return statusErr(C.ortelEnable(ro, cp, C.int(idxEnableRunProfile)))
}

func disable(ro unsafe.Pointer) error {
	return statusErr(C.ortelDisable(ro, C.int(idxDisableRunProfile)))
}
