package migration_test

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestParseRejects is the table of malformed files: each must fail with a
// message naming file:line:column, what is wrong, and what to write.
func TestParseRejects(t *testing.T) {
	const users = "collections:\n  users:\n"
	cases := []struct {
		name string
		file string
		src  string
		want []string // each must appear in the error text
	}{
		{"unknown top-level key", "0001_a.yaml", "descripton: x\ncollections: {}\n",
			[]string{`0001_a.yaml:1:1: unknown key "descripton"; did you mean "description"?`}},
		{"missing collections", "0001_a.yaml", "description: x\n",
			[]string{`0001_a.yaml:1:1: missing key "collections"`}},
		{"top level is a list", "0001_a.yaml", "- a\n- b\n",
			[]string{`0001_a.yaml:1:1: expected a mapping at the top level, found a list`}},
		{"empty file", "0001_a.yaml", "\n\n",
			[]string{`0001_a.yaml: file is empty`}},
		{"syntax error", "0001_a.yaml", "collections:\n  users: {validator: [\n",
			[]string{`0001_a.yaml:2:1: syntax error`}},
		// The YAML library numbers a parser error's line from 0: an
		// unclosed [ on line 7 said 6:1.
		{"unclosed flow sequence", "0001_a.yaml", "description: x\ncollections:\n  users:\n    validator:\n      $jsonSchema:\n        bsonType: object\n        required: [mail\n        properties:\n          mail: {bsonType: string}\n",
			[]string{`0001_a.yaml:7:1: syntax error: did not find expected ',' or ']'`}},
		{"list item after a mapping", "0001_a.yaml", "collections: {}\n- a\n",
			[]string{`0001_a.yaml:2:1: syntax error`}},
		{"tab indentation", "0001_a.yaml", "collections:\n\tusers: {}\n",
			[]string{`0001_a.yaml:2:1: syntax error`, "indent with spaces"}},
		{"two documents", "0001_a.yaml", "collections: {}\n---\ncollections: {}\n",
			[]string{`0001_a.yaml:2:1: file holds more than one YAML document`}},
		{"collection declared twice", "0001_a.yaml", users + "    upgrade: [{unset: [a]}]\n  users:\n    upgrade: [{unset: [b]}]\n",
			[]string{`0001_a.yaml:4:3: key "users" is declared twice; remove one of them (first at line 2)`}},
		{"unknown collection key", "0001_a.yaml", users + "    validationLvl: strict\n",
			[]string{`0001_a.yaml:3:5: unknown key "validationLvl"; did you mean "validationLevel"?`}},
		{"collection declares nothing", "0001_a.yaml", users[:len(users)-1] + " {}\n",
			[]string{`0001_a.yaml:2:3: collection "users" declares nothing`}},
		{"reserved collection name", "0001_a.yaml", "collections:\n  system.views: {upgrade: [{unset: [a]}]}\n",
			[]string{`0001_a.yaml:2:3: invalid collection name "system.views"`, "reserved"}},
		// MongoDB's rules: NamespaceString::validCollectionName
		// (src/mongo/db/namespace_string.h) and the 255-byte namespace
		// limit (MaxNsCollectionLen); control characters are mongomig's
		// own rule, so that a name never reaches a terminal raw.
		{"control character in collection name", "0001_a.yaml", "collections:\n  \"us\\e[31mers\\nfoo.yaml:1:1: error: forged\": {upgrade: [{unset: [a]}]}\n",
			[]string{`0001_a.yaml:2:3: invalid collection name "us\x1b[31mers\nfoo.yaml:1:1: error: forged": it contains a control character (U+001B)`, "use the collection's real name"}},
		{"non-printable rune in collection name", "0001_a.yaml", "collections:\n  \"us\\u200Bers\": {upgrade: [{unset: [a]}]}\n",
			[]string{`0001_a.yaml:2:3: invalid collection name "us\u200bers": it contains a non-printable character (U+200B)`}},
		{"collection name with a leading dot", "0001_a.yaml", "collections:\n  .x: {upgrade: [{unset: [a]}]}\n",
			[]string{`0001_a.yaml:2:3: invalid collection name ".x": it starts with '.'`}},
		{"collection name with a dollar", "0001_a.yaml", "collections:\n  a$b: {upgrade: [{unset: [a]}]}\n",
			[]string{`0001_a.yaml:2:3: invalid collection name "a$b": it contains '$'`}},
		{"collection name too long", "0001_a.yaml", "collections:\n  " + strings.Repeat("n", 254) + ": {upgrade: [{unset: [a]}]}\n",
			[]string{`0001_a.yaml:2:3: invalid collection name "nnnn`, "is 254 bytes long; MongoDB limits <database>.<collection> to 255 bytes"}},
		{"invalid validationLevel", "0001_a.yaml", users + "    validationLevel: strictest\n",
			[]string{`0001_a.yaml:3:22: invalid validationLevel "strictest"; write off, moderate or strict`}},
		{"invalid validationAction", "0001_a.yaml", users + "    validationAction: reject\n",
			[]string{`0001_a.yaml:3:23: invalid validationAction "reject"; write error or warn`}},
		{"validator without $jsonSchema", "0001_a.yaml", users + "    validator: {name: {$type: string}}\n",
			[]string{`0001_a.yaml:3:17: unknown key "name"`, "$jsonSchema"}},
		{"validator not a mapping", "0001_a.yaml", users + "    validator: strict\n",
			[]string{`0001_a.yaml:3:16: validator must be a mapping, found "strict"`}},
		{"$jsonSchema not a mapping", "0001_a.yaml", users + "    validator: {$jsonSchema: [a]}\n",
			[]string{`0001_a.yaml:3:30: $jsonSchema must be a mapping, found a list`}},
		{"empty upgrade list", "0001_a.yaml", users + "    upgrade: []\n",
			[]string{`0001_a.yaml:3:14: upgrade has no steps`}},
		{"empty upgrade step", "0001_a.yaml", users + "    upgrade:\n      - {}\n",
			[]string{`0001_a.yaml:4:9: upgrade step 1 is empty`}},
		{"step with two operations", "0001_a.yaml", users + "    upgrade:\n      - {unset: [a], set: {b: 1}}\n",
			[]string{`0001_a.yaml:4:9: upgrade step 1 has 2 operations; split it into one list item per operation`}},
		{"unknown step", "0001_a.yaml", users + "    upgrade:\n      - renam: {a: b}\n",
			[]string{`0001_a.yaml:4:9: unknown key "renam"; did you mean "rename"?`}},
		{"upgrade not a list", "0001_a.yaml", users + "    upgrade: {rename: {a: b}}\n",
			[]string{`0001_a.yaml:3:14: upgrade must be a list of steps, found a mapping`}},
		{"unset of a mapping", "0001_a.yaml", users + "    upgrade:\n      - unset: {a: 1}\n",
			[]string{`0001_a.yaml:4:16: unset takes a list of field paths, found a mapping`}},
		{"rename to a string list", "0001_a.yaml", users + "    upgrade:\n      - rename: [a, b]\n",
			[]string{`0001_a.yaml:4:17: rename must be a mapping, found a list; write ` + "`rename: {from.path: to.path}`"}},
		{"rename onto itself", "0001_a.yaml", users + "    upgrade:\n      - rename: {a: a.b}\n",
			[]string{`0001_a.yaml:4:18: rename "a" to "a.b": the paths overlap`}},
		{"conflicting paths in one step", "0001_a.yaml", users + "    upgrade:\n      - set: {a: 1, a.b: 2}\n",
			[]string{`0001_a.yaml:4:21: set touches "a" and "a.b" in one step: the paths conflict; split it into two steps`}},
		{"empty path segment", "0001_a.yaml", users + "    upgrade:\n      - unset: [a..b]\n",
			[]string{`0001_a.yaml:4:17: field path "a..b" has an empty segment`}},
		{"dollar path", "0001_a.yaml", users + "    upgrade:\n      - unset: [items.$.x]\n",
			[]string{`0001_a.yaml:4:17: field path "items.$.x" has a segment starting with '$'`}},
		{"positional array filter", "0001_a.yaml", users + "    upgrade:\n      - set: {\"items.$[].x\": 1}\n",
			[]string{`0001_a.yaml:4:15: field path "items.$[].x" has a segment starting with '$'`}},
		{"top-level dollar field", "0001_a.yaml", users + "    upgrade:\n      - set: {$x: 1}\n",
			[]string{`0001_a.yaml:4:15: field path "$x" starts with '$'`}},
		{"unsets _id", "0001_a.yaml", users + "    upgrade:\n      - unset: [_id]\n",
			[]string{`0001_a.yaml:4:17: an upgrade cannot change "_id"`}},
		{"renames _id away", "0001_a.yaml", users + "    upgrade:\n      - rename: {_id: legacyId}\n",
			[]string{`0001_a.yaml:4:18: an upgrade cannot change "_id"`}},
		{"bad func name", "0001_a.yaml", users + "    upgrade:\n      - func: split name\n",
			[]string{`0001_a.yaml:4:15: invalid function name "split name"`}},
		{"malformed $oid", "0001_a.yaml", users + "    upgrade:\n      - set: {owner: {$oid: nothex}}\n",
			[]string{`0001_a.yaml:4:22: $oid value: malformed Extended JSON`, `write it like {$oid: "64b7f0c2a1b2c3d4e5f60718"}`}},
		{"malformed $date", "0001_a.yaml", users + "    upgrade:\n      - default: {at: {$date: yesterday}}\n",
			[]string{`0001_a.yaml:4:23: $date value: malformed Extended JSON`}},
		{"malformed $numberDecimal", "0001_a.yaml", users + "    upgrade:\n      - default: {price: {$numberDecimal: abc}}\n",
			[]string{`0001_a.yaml:4:26: $numberDecimal value: malformed Extended JSON`}},
		{"unquoted date", "0001_a.yaml", users + "    upgrade:\n      - default: {since: 2024-01-31}\n",
			[]string{`0001_a.yaml:4:26: ambiguous unquoted date 2024-01-31`, `{$date: "2024-01-31T00:00:00Z"}`}},
		{"integer too large", "0001_a.yaml", users + "    upgrade:\n      - set: {n: 99999999999999999999}\n",
			[]string{`0001_a.yaml:4:18: integer 99999999999999999999 does not fit in 64 bits`}},
		{"index without keys", "0001_a.yaml", users + "    indexes:\n      create:\n        - {unique: true}\n",
			[]string{`0001_a.yaml:5:11: index has no keys`}},
		{"index bad direction", "0001_a.yaml", users + "    indexes:\n      create:\n        - {keys: {email: up}}\n",
			[]string{`0001_a.yaml:5:26: invalid index direction "up" for "email"`}},
		{"unknown index option", "0001_a.yaml", users + "    indexes:\n      create:\n        - {keys: {email: 1}, uniq: true}\n",
			[]string{`0001_a.yaml:5:30: unknown key "uniq"; did you mean "unique"?`}},
		{"unique not a boolean", "0001_a.yaml", users + "    indexes:\n      create:\n        - {keys: {email: 1}, unique: yes}\n",
			[]string{`0001_a.yaml:5:38: unique must be a boolean, found "yes"; write true or false`}},
		{"drop the _id index", "0001_a.yaml", users + "    indexes:\n      drop: [_id_]\n",
			[]string{`0001_a.yaml:4:14: the _id index cannot be dropped`}},
		{"same index dropped and created", "0001_a.yaml", users + "    indexes:\n      drop: [email_1]\n      create: [{keys: {email: 1}}]\n",
			[]string{`0001_a.yaml:4:14: index "email_1" is both dropped and created`}},
		{"duplicate index names", "0001_a.yaml", users + "    indexes:\n      create:\n        - {keys: {a: 1}, name: x}\n        - {keys: {b: 1}, name: x}\n",
			[]string{`0001_a.yaml:6:11: two indexes are named "x"`}},
		{"example without after", "0001_a.yaml", users + "    upgrade: [{unset: [a]}]\n    examples:\n      - before: {a: 1}\n",
			[]string{`0001_a.yaml:5:9: an example needs both before and after`}},
		{"bad file name", "add_users.yaml", "collections: {}\n",
			[]string{`add_users.yaml: invalid migration file name "add_users.yaml"; name it NNNN_snake_name.yaml`}},
		{"camel case file name", "0003_AddUsers.yaml", "collections: {}\n",
			[]string{`invalid migration file name "0003_AddUsers.yaml"; write the name after the number in lower-case snake_case, such as 0003_add_users.yaml`}},
		{"version zero", "0000_init.yaml", "collections: {}\n",
			[]string{`0000_init.yaml: version 0 is reserved`}},
		{"json syntax error", "0001_a.json", `{"collections": {"users": {"upgrade": [}}}`,
			[]string{`0001_a.json:1:40: syntax error`}},
		{"json syntax error on a later line", "0002_b.json", "{\n  \"collections\": {\n    \"users\": {,}\n  }\n}\n",
			[]string{`0002_b.json:3:15: syntax error: invalid character ','`}},
		{"recursive alias", "0001_a.yaml", users + "    upgrade:\n      - set: &x {a: [*x]}\n",
			[]string{`0001_a.yaml:4:22: alias *x makes the document recursive`}},
		{"billion laughs", "0001_a.yaml", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
			[]string{`0001_a.yaml:6:4: aliases expand the document past 1000000 values`}},
		{"json unknown key", "0001_a.json", "{\n  \"collections\": {\n    \"users\": {\"upgrades\": []}\n  }\n}\n",
			[]string{`0001_a.json:3:15: unknown key "upgrades"; did you mean "upgrade"?`}},
	}
	if len(cases) < 25 {
		t.Fatalf("the malformed-file table must hold at least 25 cases, has %d", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := migration.Parse(tc.file, []byte(tc.src))
			if err == nil {
				t.Fatalf("parsed without error: %+v", m)
			}
			if m == nil || !m.Broken {
				t.Errorf("want a partial migration marked Broken alongside the error, got %+v", m)
			}
			var list migration.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T is not a non-empty ErrorList: %v", err, err)
			}
			for _, e := range list {
				if e.File != tc.file {
					t.Errorf("error names file %q, want %q", e.File, tc.file)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

// TestParseReportsAllProblems checks that one file's several problems are
// all reported, in position order.
func TestParseReportsAllProblems(t *testing.T) {
	src := "collections:\n  users:\n    validationLevel: hard\n    upgrade: []\n    indexs: {}\n"
	_, err := migration.Parse("0001_x.yaml", []byte(src))
	var list migration.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("want ErrorList, got %v", err)
	}
	var lines []int
	for _, e := range list {
		lines = append(lines, e.Pos.Line)
	}
	if len(list) != 3 || lines[0] != 3 || lines[1] != 4 || lines[2] != 5 {
		t.Fatalf("want 3 problems on lines 3, 4, 5; got %v:\n%v", lines, err)
	}
}

func TestParseFullFile(t *testing.T) {
	src := `description: Split name; move email.
collections:
  users:
    validator:
      $jsonSchema:
        bsonType: object
        required: [name]
    validationLevel: moderate
    validationAction: warn
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active, score: 1.5, big: 3000000000}
      - unset: [legacyId, tmp]
      - copy: {contact.email: login}
      - set: {owner: {$oid: "64b7f0c2a1b2c3d4e5f60718"}, at: {$date: "2024-01-31T12:00:00Z"}, price: {$numberDecimal: "19.99"}, none: null}
      - func: splitName
    downgrade:
      - rename: {contact.email: email}
    indexes:
      drop: [email_1]
      create:
        - {keys: {contact.email: 1, createdAt: -1}, unique: true}
        - {keys: {body: text}, name: body_text, sparse: true, expireAfterSeconds: 60, partialFilterExpression: {status: {$exists: true}}}
    examples:
      - before: {name: Ada, email: a@b.c}
        after: {name: Ada, contact: {email: a@b.c}}
`
	m, err := migration.Parse("0042_split_name.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 42 || m.Name != "split_name" || m.Description != "Split name; move email." {
		t.Errorf("header = %d %q %q", m.Version, m.Name, m.Description)
	}
	if m.Checksum != migration.Checksum([]byte(src)) || !strings.HasPrefix(m.Checksum, "sha256:") {
		t.Errorf("checksum = %q", m.Checksum)
	}
	c := m.Collection("users")
	if c == nil || m.Collection("orders") != nil {
		t.Fatal("Collection lookup broken")
	}
	if c.ValidationLevel != migration.LevelModerate || c.ValidationAction != migration.ActionWarn {
		t.Errorf("level/action = %q/%q", c.ValidationLevel, c.ValidationAction)
	}
	wantValidator := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "bsonType", Value: "object"}, {Key: "required", Value: bson.A{"name"}}}}}
	if !equalBSON(c.Validator, wantValidator) {
		t.Errorf("validator = %v", c.Validator)
	}
	ops := []migration.Op{}
	for _, s := range c.Upgrade {
		ops = append(ops, s.Op)
	}
	wantOps := []migration.Op{migration.OpRename, migration.OpDefault, migration.OpUnset, migration.OpCopy, migration.OpSet, migration.OpFunc}
	if len(ops) != len(wantOps) {
		t.Fatalf("ops = %v", ops)
	}
	for i := range ops {
		if ops[i] != wantOps[i] {
			t.Errorf("step %d op = %s, want %s", i, ops[i], wantOps[i])
		}
	}
	if f := c.Upgrade[0].Fields[0]; f.Path != "email" || f.To != "contact.email" || f.Pos.Line != 11 {
		t.Errorf("rename field = %+v", f)
	}
	def := c.Upgrade[1].Fields
	if def[0].Value != "active" || def[1].Value != 1.5 || def[2].Value != int64(3000000000) {
		t.Errorf("default values = %#v %#v %#v", def[0].Value, def[1].Value, def[2].Value)
	}
	set := c.Upgrade[4].Fields
	oid, _ := bson.ObjectIDFromHex("64b7f0c2a1b2c3d4e5f60718")
	if set[0].Value != oid {
		t.Errorf("$oid = %#v", set[0].Value)
	}
	if dt, ok := set[1].Value.(bson.DateTime); !ok || dt.Time().UTC().Format("2006-01-02T15:04:05Z") != "2024-01-31T12:00:00Z" {
		t.Errorf("$date = %#v", set[1].Value)
	}
	if d, ok := set[2].Value.(bson.Decimal128); !ok || d.String() != "19.99" {
		t.Errorf("$numberDecimal = %#v", set[2].Value)
	}
	if set[3].Value != nil {
		t.Errorf("null = %#v", set[3].Value)
	}
	if c.Upgrade[5].Func != "splitName" {
		t.Errorf("func = %q", c.Upgrade[5].Func)
	}
	if len(c.Downgrade) != 1 {
		t.Errorf("downgrade = %+v", c.Downgrade)
	}
	idx := c.Indexes
	if len(idx.Drop) != 1 || idx.Drop[0].Name != "email_1" || len(idx.Create) != 2 {
		t.Fatalf("indexes = %+v", idx)
	}
	if idx.Create[0].Name != "contact.email_1_createdAt_-1" || !idx.Create[0].Unique {
		t.Errorf("index 0 = %+v", idx.Create[0])
	}
	i1 := idx.Create[1]
	if i1.Name != "body_text" || !i1.Sparse || i1.ExpireAfterSeconds == nil || *i1.ExpireAfterSeconds != 60 || len(i1.PartialFilterExpression) != 1 {
		t.Errorf("index 1 = %+v", i1)
	}
	if len(c.Examples) != 1 || len(c.Examples[0].After) != 2 {
		t.Errorf("examples = %+v", c.Examples)
	}
	if pos := m.Position("/collections/users/validator/$jsonSchema/required"); pos.Line != 7 || pos.Column != 19 {
		t.Errorf("Position(required) = %+v, want 7:19 (the value)", pos)
	}
	if pos := m.Position("/collections/users/validator/$jsonSchema/properties/x"); pos.Line != 6 {
		t.Errorf("Position of a missing key = %+v, want its nearest ancestor, the schema mapping on line 6", pos)
	}
}

func TestParseJSONFile(t *testing.T) {
	src := `{"description": "d", "collections": {"posts": {"upgrade": [{"default": {"tags": []}}], "indexes": {"create": [{"keys": {"publishedAt": -1}}]}}}}`
	m, err := migration.Parse("0007_posts.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Collection("posts")
	if c == nil || len(c.Upgrade) != 1 || c.Indexes.Create[0].Name != "publishedAt_-1" {
		t.Fatalf("parsed %+v", c)
	}
}

func TestAliasesAreResolved(t *testing.T) {
	src := "collections:\n  a: &same\n    upgrade: [{unset: [x]}]\n  b: *same\n"
	m, err := migration.Parse("0001_x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Collections) != 2 || len(m.Collection("b").Upgrade) != 1 {
		t.Fatalf("alias not resolved: %+v", m.Collections)
	}
}

func equalBSON(a, b any) bool {
	ba, err1 := bson.Marshal(bson.D{{Key: "v", Value: a}})
	bb, err2 := bson.Marshal(bson.D{{Key: "v", Value: b}})
	return err1 == nil && err2 == nil && string(ba) == string(bb)
}
