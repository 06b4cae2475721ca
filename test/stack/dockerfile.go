package stack

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Dockerfile is the repository's image build file, relative to its root.
const Dockerfile = "Dockerfile"

// DockerfileImages returns the base images of a Dockerfile's FROM lines, in
// order, leaving out references to earlier stages and flags such as
// --platform=$BUILDPLATFORM. A file with no FROM line is an error naming it.
func DockerfileImages(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read Dockerfile: %w", err)
	}
	var images []string
	stages := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.EqualFold(fields[0], "FROM") {
			continue
		}
		args := slices.DeleteFunc(fields[1:], func(s string) bool { return strings.HasPrefix(s, "--") })
		if len(args) == 0 {
			continue
		}
		if !stages[strings.ToLower(args[0])] {
			images = append(images, args[0])
		}
		if len(args) == 3 && strings.EqualFold(args[1], "AS") {
			stages[strings.ToLower(args[2])] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read Dockerfile %q: %w", path, err)
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("the Dockerfile %q has no FROM line", path)
	}
	return images, nil
}
