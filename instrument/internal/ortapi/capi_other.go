//go:build !(linux && cgo)

package ortapi

import (
	"fmt"
	"unsafe"
)

func load() (string, error) {
	return "", fmt.Errorf("%w: only on Linux, built with cgo", ErrUnsupported)
}

func enable(unsafe.Pointer, string) error { return ErrUnsupported }

func disable(unsafe.Pointer) error { return ErrUnsupported }

func providers() ([]string, error) {
	return nil, fmt.Errorf("list execution providers: only on Linux, built with cgo")
}
