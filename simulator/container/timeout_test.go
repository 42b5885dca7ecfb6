package container_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/log"

	"github.com/partner-v3/conformance-kit/simulator/container"
)

// TestRunTimeoutNamesTheLikelyCauses: a start that does not answer in
// time says why it may be, not only "context deadline exceeded" (issue 11).
func TestRunTimeoutNamesTheLikelyCauses(t *testing.T) {
	requireDocker(t)
	t.Parallel()
	c, err := container.Run(t.Context(),
		container.WithImage(simImage),
		container.WithStartupTimeout(time.Nanosecond),
		testcontainers.WithLogger(log.TestLogger(t)))
	testcontainers.CleanupContainer(t, c)
	if err == nil {
		t.Fatal("Run answered within a nanosecond's startup timeout")
	}
	t.Logf("Run: %v", err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not wrap context.DeadlineExceeded", err)
	}
	for _, want := range []string{"likely causes", "Docker engine", "TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1", "Ryuk", simImage} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
