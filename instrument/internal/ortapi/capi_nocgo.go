//go:build !cgo

package ortapi

import (
	"fmt"
	"unsafe"
)

func load() (string, error) {
	return "", fmt.Errorf("%w: built without cgo", ErrUnsupported)
}

func enable(unsafe.Pointer, string) error { return ErrUnsupported }

func disable(unsafe.Pointer) error { return ErrUnsupported }
