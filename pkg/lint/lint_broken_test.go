package lint_test

import (
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
)

// TestLintNoWarningFromABrokenEarlierFile: 0001 requires mail but does not
// parse (an unclosed [ on line 7), so the validator in force at 0002 is
// unknown; lint reports the syntax error at that line and no "the
// validator does not require mail" warning for 0002's unique index. The
// same 0002 after a 0001 that parses and requires nothing is warned about.
func TestLintNoWarningFromABrokenEarlierFile(t *testing.T) {
	index := "collections:\n  customers:\n    indexes:\n      create:\n        - {keys: {mail: 1}, unique: true}\n"
	broken := fstest.MapFS{
		"0001_a.yaml": {Data: []byte("description: x\ncollections:\n  customers:\n    validator:\n      $jsonSchema:\n        bsonType: object\n        required: [mail\n        properties:\n          mail: {bsonType: string}\n")},
		"0002_b.yaml": {Data: []byte(index)},
	}
	rep, err := lint.Lint(broken)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 1 || rep.Warnings != 0 || rep.Problems[0].Location() != "0001_a.yaml:7:1" {
		t.Errorf("broken 0001: %d errors, %d warnings: %+v; want only the syntax error at 0001_a.yaml:7:1", rep.Errors, rep.Warnings, rep.Problems)
	}
	plain := fstest.MapFS{
		"0001_a.yaml": {Data: []byte("collections:\n  customers:\n    validator: {$jsonSchema: {bsonType: object}}\n")},
		"0002_b.yaml": {Data: []byte(index)},
	}
	if rep, err = lint.Lint(plain); err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 || rep.Warnings != 1 || rep.Problems[0].Location() != "0002_b.yaml:5:11" {
		t.Errorf("0001 without required: %+v; want one warning at 0002_b.yaml:5:11", rep.Problems)
	}
}
