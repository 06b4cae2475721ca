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

// Execution providers, through the table of C API 24 (every library the Go
// binding loads has it): GetAvailableProviders and ReleaseAvailableProviders
// at the indices the caller passes.
typedef OrtStatus* (*ortelProvidersFn)(char***, int*);
typedef OrtStatus* (*ortelReleaseProvidersFn)(char**, int);

static int ortelVisitInto(struct dl_phdr_info* info, size_t size, void* data) {
	(void)size;
	if (info->dlpi_name == NULL || info->dlpi_name[0] == 0) return 0;
	void* h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL) return 0;
	void* sym = dlsym(h, "OrtGetApiBase");
	dlclose(h);
	if (sym == NULL) return 0;
	*(ortelGetApiBaseFn*)data = (ortelGetApiBaseFn)sym;
	return 1;
}

// ortelProviders returns the names of the execution providers the loaded
// library was built with, one per line, in a malloc'd string (*out), or an
// error message (*err). It returns 0 on success, 1 when no ONNX Runtime is
// loaded, 2 when the library has no table of version want, 3 when the call
// failed.
static int ortelProviders(uint32_t want, int idxGet, int idxRelease, char** out, char** err) {
	ortelGetApiBaseFn found = NULL;
	dl_iterate_phdr(ortelVisitInto, &found);
	if (found == NULL) return 1;
	const ortelApiBase* base = found();
	if (base == NULL) return 1;
	const void* const* api = (const void* const*)base->GetApi(want);
	if (api == NULL) return 2;
	char** names = NULL;
	int n = 0;
	OrtStatus* st = ((ortelProvidersFn)api[idxGet])(&names, &n);
	if (st != NULL) {
		const char* m = ((ortelErrorMessageFn)api[ortelIdxGetErrorMessage])(st);
		*err = strdup(m ? m : "unknown ONNX Runtime error");
		((ortelReleaseStatusFn)api[ortelIdxReleaseStatus])(st);
		return 3;
	}
	size_t len = 1;
	for (int i = 0; i < n; i++) len += strlen(names[i]) + 1;
	char* buf = malloc(len);
	buf[0] = 0;
	for (int i = 0; i < n; i++) { strcat(buf, names[i]); strcat(buf, "\n"); }
	*out = buf;
	st = ((ortelReleaseProvidersFn)api[idxRelease])(names, n);
	if (st != NULL) ((ortelReleaseStatusFn)api[ortelIdxReleaseStatus])(st);
	return 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
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

func providers() ([]string, error) {
	var out, msg *C.char
	rc := C.ortelProviders(C.uint32_t(ProvidersAPIVersion), C.int(idxGetAvailableProviders), C.int(idxReleaseAvailableProviders), &out, &msg)
	if out != nil {
		defer C.free(unsafe.Pointer(out))
	}
	if msg != nil {
		defer C.free(unsafe.Pointer(msg))
	}
	switch rc {
	case 0:
		return strings.Fields(C.GoString(out)), nil
	case 1:
		return nil, errors.New("list execution providers: no ONNX Runtime library is loaded in this process")
	case 2:
		return nil, fmt.Errorf("list execution providers: the loaded ONNX Runtime has no C API %d table", ProvidersAPIVersion)
	default:
		return nil, errors.New("list execution providers: ONNX Runtime: " + C.GoString(msg))
	}
}
