package main

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// explainListen adds to a listener that could not open, because another
// process holds its port, what to change: the flag and the variable of
// that listener (--addr for the partner API, --admin-addr for the control
// API; issue 27). server.Open names the control listener's "admin
// address"; any other error is returned as it is.
func explainListen(err error, addr, adminAddr string) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	flag, env, value, what := "--addr", "SIM_ADDR", addr, "the partner API"
	if strings.Contains(err.Error(), "admin address") {
		flag, env, value, what = "--admin-addr", "SIM_ADMIN_ADDR", adminAddr, "the control API"
	}
	return fmt.Errorf("%w: %s (%s) cannot listen on %s, which another process holds (another simulator?): stop it, or give another address with %s or %s (127.0.0.1:0 takes any free port; the banner prints it)",
		err, flag, what, value, flag, env)
}
