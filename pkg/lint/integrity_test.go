package lint_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
)

// TestLintIntegrity: the integrity rules in force are checked against
// each other and the validators, each problem at the rule's line.
func TestLintIntegrity(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_school.yaml": {Data: []byte(`description: School.
collections:
  classes:
    validator:
      $jsonSchema: {bsonType: object, properties: {credits: {bsonType: int}, name: {bsonType: string}}}
  posts:
    validator:
      $jsonSchema: {bsonType: object, properties: {commentCount: {bsonType: string}}}
`)},
		"0002_rules.yaml": {Data: []byte(`description: Rules.
collections:
  students:
    validator:
      $jsonSchema:
        bsonType: object
        properties:
          classes: {bsonType: array, items: {bsonType: object, properties: {credits: {bsonType: string}}}}
    references:
      - {path: classes._id, to: classes}
      - {path: tutorId, to: tutors}
    copies:
      - {via: classes._id, mode: mirror, fields: {credits: credits, name: name}}
      - {via: classes._id, mode: snapshot, fields: {name: name}}
      - {via: mentorId, mode: mirror, fields: {mentorName: name}}
  posts:
    aggregates:
      - {field: commentCount, op: count, from: coments, by: postId}
  comments:
    references:
      - {path: postId, to: posts}
`)},
	}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		got = append(got, p.Location()+": "+string(p.Severity)+": "+p.Message+" ("+p.Hint+")")
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`0002_rules.yaml:11:9: warning: reference "tutorId" names collection "tutors", which no migration declares`,
		`0002_rules.yaml:14:9: error: field "classes.name" is claimed by a mirror copy of classes.name and by a snapshot copy of classes.name (a snapshot is never rewritten`,
		`0002_rules.yaml:15:9: error: copy via "mentorId": the collection declares no reference at "mentorId"`,
		`0002_rules.yaml:13:9: error: "classes.credits" copies classes.credits (int), but the validator of "students" allows string there`,
		`0002_rules.yaml:18:9: warning: aggregate "commentCount" names collection "coments", which no migration declares (did you mean "comments"?)`,
		`0002_rules.yaml:18:9: error: the validator of "posts" allows string at "commentCount", where the count aggregate stores a number`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint said\n%s\nwant %q", all, want)
		}
	}
	if strings.Contains(all, `"classes", which no migration declares`) {
		t.Errorf("a declared collection is reported:\n%s", all)
	}
}
