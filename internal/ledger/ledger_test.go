package ledger

import (
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestEntryDocument pins the ledger entry's fields, names and order
// (invariant 3): older releases read these documents, so a field is never
// renamed and a later one is omitted while empty.
func TestEntryDocument(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	e := Entry{Version: 3, Name: "user_contact", File: "0003_user_contact.yaml", Checksum: "sha256:a",
		AppliedAt: at, DurationMS: 7, AppliedBy: AppliedBy{Host: "h", User: "u", PID: 9, Owner: "o"}, ToolVersion: "dev"}
	raw, err := bson.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := bson.D{{Key: "_id", Value: int64(3)}, {Key: "name", Value: "user_contact"}, {Key: "file", Value: "0003_user_contact.yaml"},
		{Key: "checksum", Value: "sha256:a"}, {Key: "appliedAt", Value: bson.NewDateTimeFromTime(at)}, {Key: "durationMs", Value: int64(7)},
		{Key: "appliedBy", Value: bson.D{{Key: "host", Value: "h"}, {Key: "user", Value: "u"}, {Key: "pid", Value: int32(9)}, {Key: "owner", Value: "o"}}},
		{Key: "toolVersion", Value: "dev"}}
	wantRaw, err := bson.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(wantRaw) {
		t.Errorf("entry document:\n got %s\nwant %s", bson.Raw(raw), bson.Raw(wantRaw))
	}
}

// TestCheckMarkKeepsOrder: a mark never leaves a pending file below an
// applied one (marks.go, invariant 4), and a mark that changes nothing is
// refused.
func TestCheckMarkKeepsOrder(t *testing.T) {
	ms := []*migration.Migration{{Version: 1, File: "0001_a.yaml"}, {Version: 2, File: "0002_b.yaml"}, {Version: 3, File: "0003_c.yaml"}}
	entries := map[int64]Entry{1: {Version: 1, File: "0001_a.yaml"}, 2: {Version: 2, File: "0002_b.yaml"}}
	for _, c := range []struct {
		v       int64
		applied bool
		refused bool
	}{
		{3, true, false}, {2, false, false}, {1, false, true}, {2, true, true}, {3, false, true}, {4, true, true},
	} {
		err := CheckMark(entries, ms, c.v, c.applied)
		var me *MarkError
		if got := errors.As(err, &me); got != c.refused {
			t.Errorf("mark %d applied=%v: %v; refused want %v", c.v, c.applied, err, c.refused)
		}
	}
	if err := CheckMark(map[int64]Entry{1: {Version: 1}}, ms, 3, true); err == nil || err.Error() != "cannot mark migration 3: 0002_b.yaml, below it, is not applied (apply or mark it first); nothing was recorded" {
		t.Errorf("a gap below: %v", err)
	}
}
