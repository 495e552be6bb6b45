package lifecycle

import (
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/buckets"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// TestBucketFamilyMembers: only names the pattern produces are members,
// oldest first; those older than Keep periods are dropped, the current
// period to Ahead ahead created where missing.
func TestBucketFamilyMembers(t *testing.T) {
	fam, err := buckets.New("events_{yyyy}_{mm}", buckets.Month)
	if err != nil {
		t.Fatal(err)
	}
	f := migration.FamilyState{Pattern: fam.Pattern, Family: fam, Ahead: 2, Keep: 3}
	july := time.Date(2025, time.July, 9, 12, 0, 0, 0, time.UTC)
	names := []string{"events_2025_07", "events", "events_2025_03", "events_2025_05", "other_2025_01", "events_2025_06"}
	fm := Family(f, names, july)
	if want := []string{"events_2025_03", "events_2025_05", "events_2025_06", "events_2025_07"}; !slices.Equal(fm.Members, want) {
		t.Fatalf("members %v, want %v", fm.Members, want)
	}
	if want := []string{"events_2025_03"}; !slices.Equal(fm.Drop, want) {
		t.Fatalf("drop %v, want %v", fm.Drop, want)
	}
	if want := []string{"events_2025_08", "events_2025_09"}; !slices.Equal(fm.Create, want) {
		t.Fatalf("create %v, want %v", fm.Create, want)
	}
	if want := []string{"events_2025_05", "events_2025_06", "events_2025_07"}; !slices.Equal(fm.Kept(), want) {
		t.Fatalf("kept %v, want %v", fm.Kept(), want)
	}
	f.Keep = 0 // never dropped
	if fm := Family(f, names, july); len(fm.Drop) != 0 {
		t.Fatalf("keep 0 drops %v", fm.Drop)
	}
}

// TestBucketFamilyDeclaredWithoutValidator: no validator, no level or
// action (they would mean nothing).
func TestBucketFamilyDeclaredWithoutValidator(t *testing.T) {
	f := migration.FamilyState{Level: migration.LevelConstraint, Action: migration.ActionError}
	if d := FamilyDeclared(f, nil); d.Level != "" || d.Action != "" {
		t.Fatalf("declared %+v", d)
	}
	v := bson.D{{Key: "$jsonSchema", Value: bson.D{}}}
	if d := FamilyDeclared(f, v); d.Level != string(migration.LevelConstraint) || LevelOf(v, f.Level) != f.Level || ActionOf(nil, f.Action) != "" {
		t.Fatalf("declared %+v", d)
	}
}

// TestBucketFamilyValidatorClientSide: a server that does not enforce
// validators creates members without one (reported client-side).
func TestBucketFamilyValidatorClientSide(t *testing.T) {
	f := migration.FamilyState{Validator: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "bsonType", Value: "object"}}}}}
	if v, clientSide := FamilyValidator(f, &probe.Capabilities{}); v != nil || !clientSide {
		t.Fatalf("validator %v, client-side %v", v, clientSide)
	}
}
