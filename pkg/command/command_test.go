package command_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCustomBinaryRunsFuncExamples builds the example custom binary and
// checks that it runs the example of a func step the stock binary can only
// skip.
func TestCustomBinaryRunsFuncExamples(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := t.TempDir() + "/custom-mongomig"
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/custom-mongomig").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := "../../examples/custom-mongomig/migrations"
	out, err := exec.Command(bin, "--dir", dir, "lint").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "1 migration checked, 0 errors, 0 warnings") {
		t.Fatalf("custom lint: %v\n%s", err, out)
	}
	stock, err := exec.Command("go", "run", "../../cmd/mongomig", "--dir", dir, "lint").CombinedOutput()
	if err != nil || !strings.Contains(string(stock), "warning: example 1 not checked") {
		t.Fatalf("stock lint should warn that it cannot run the func: %v\n%s", err, stock)
	}
	// It links no sandbox: --embedded and demo say so (exit 2).
	for _, args := range [][]string{{"--embedded", t.TempDir(), "info"}, {"demo"}} {
		out, err = exec.Command(bin, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "built without the embedded sandbox") {
			t.Errorf("custom %v: %v\n%s", args, err, out)
		}
	}
	// A wrong example fails in the custom binary, with the diff.
	bad := t.TempDir()
	src, _ := os.ReadFile(dir + "/0001_split_name.yaml")
	if err := os.WriteFile(bad+"/0001_split_name.yaml", []byte(strings.Replace(string(src), "last: Lovelace", "last: Byron", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "--dir", bad, "lint").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `~ name.last: got "Lovelace", expected "Byron"`) {
		t.Fatalf("custom lint of a wrong example: %v\n%s", err, out)
	}
}
