package e2e

import (
	"fmt"
	"net"
)

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1. All n
// listeners are open at once, so the ports differ; another process may
// still take one before the caller binds it, which the caller notices as a
// failed start.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var lis []net.Listener
	defer func() {
		for _, l := range lis {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
		}
		lis = append(lis, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
