package lint_test

import (
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
)

// TestLintSuggestsCollectionName: `user:` in one file while two others
// say `users:` is a warning with a did-you-mean at the key (it passed
// lint silently, and up created a new collection user); a name no other
// file comes close to, and one two edits from another name, are not.
func TestLintSuggestsCollectionName(t *testing.T) {
	file := func(coll string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("collections:\n  " + coll + ":\n    indexes:\n      create:\n        - keys: {email: 1}\n")}
	}
	r, err := lint.Lint(fstest.MapFS{
		"0001_users.yaml": file("users"), "0002_users.yaml": file("users"), "0003_typo.yaml": file("user"),
		"0004_logs.yaml": file("logs"), "0005_tags.yaml": file("tags"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || r.Errors != 0 {
		t.Fatalf("problems %+v; want one warning", r.Problems)
	}
	p := r.Problems[0]
	want := lint.Problem{Severity: lint.SeverityWarning, File: "0003_typo.yaml", Line: 2, Column: 3, Collection: "user",
		Message: `collection "user" is declared by no other migration, and "users" by 2 others`,
		Hint:    `did you mean "users"? Applied, this file creates a new collection "user" instead`}
	if p != want {
		t.Errorf("problem\n%+v\nwant\n%+v", p, want)
	}
}
