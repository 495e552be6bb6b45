package command_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/mongomig/mongomig/pkg/command"
)

// TestPanicExits70 runs a team's binary whose command panics (its
// Embedded function here) as a process: exit 70, one line on stderr, no
// Go stack trace and no password.
func TestPanicExits70(t *testing.T) {
	if dir := os.Getenv("MONGOMIG_TEST_PANICKING_BINARY"); dir != "" {
		p := command.Program{Embedded: func(context.Context, string) (string, func(context.Context) error, error) {
			panic("dial mongodb://admin:Hunter2Secret@db.example.com/app failed")
		}}
		os.Exit(p.Run([]string{"--embedded", dir, "info"}))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicExits70$")
	cmd.Env = append(os.Environ(), "MONGOMIG_TEST_PANICKING_BINARY="+t.TempDir(), "MONGOMIG_DEBUG=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	want := "mongomig: internal error: dial mongodb://admin:***@db.example.com/app failed; this is a bug in mongomig or in a func step: please report it with the command you ran\n"
	if !errors.As(err, &ee) || ee.ExitCode() != 70 || stderr.String() != want {
		t.Fatalf("%v, stderr:\n%s\nwant exit 70 and:\n%s", err, stderr.String(), want)
	}
}
