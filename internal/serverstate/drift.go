package serverstate

// What status reports of the server against the files, beyond what
// [Compare] puts back: each difference worded, indexes no applied
// migration names, and index options other than unique.

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Drift is one way the server differs from what the applied migrations
// declare for a collection (drift of the server), as status shows it.
type Drift struct {
	// What differs: "validator", "validationLevel", "validationAction" or
	// "index NAME".
	What     string `json:"what"`
	Declared string `json:"declared,omitempty"`
	Found    string `json:"found,omitempty"`
	// From is the migration that declares it (0: none does, as for an
	// index created by hand).
	From    int64  `json:"from,omitempty"`
	Message string `json:"message"`
}

// DriftOf words one of [Compare]'s differences.
func DriftOf(e Difference) Drift {
	sd := Drift{What: e.What, Declared: e.Declared, Found: e.Found, From: e.From}
	from := fmt.Sprintf("%04d", e.From)
	switch {
	case e.What == "the validator":
		sd.What, sd.Declared = "validator", ""
		if e.Found == "none" {
			sd.Message = fmt.Sprintf("%s: the server holds no validator; %s declares one", e.Collection, from)
		} else {
			sd.Message = fmt.Sprintf("%s: the validator differs from %s's (the server holds %s)", e.Collection, from, e.Found)
		}
	case e.What == "validationLevel" || e.What == "validationAction":
		sd.Message = fmt.Sprintf("%s: %s is %s on the server; %s declares %s", e.Collection, e.What, e.Found, from, e.Declared)
	case e.Declared == "its drop":
		sd.Declared = ""
		sd.Message = fmt.Sprintf("%s: %s exists; %s drops it", e.Collection, e.What, from)
	case e.Found == "absent":
		sd.Declared = ""
		sd.Message = fmt.Sprintf("%s: %s does not exist; %s creates it", e.Collection, e.What, from)
	default:
		sd.Message = fmt.Sprintf("%s: %s is %s on the server; %s creates %s", e.Collection, e.What, e.Found, from, e.Declared)
	}
	return sd
}

// IndexDrift is what [Compare] does not: indexes no applied
// migration names, and the options (other than unique) of the declared
// ones whose keys match (options false: the server does not list them).
func IndexDrift(ctx context.Context, db *mongo.Database, d Declared, options bool) ([]Drift, error) {
	cur, err := db.Collection(d.Name).Indexes().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the indexes of %s: %w", d.Name, err)
	}
	var specs []bson.D
	if err := cur.All(ctx, &specs); err != nil {
		return nil, fmt.Errorf("list the indexes of %s: %w", d.Name, err)
	}
	var out []Drift
	for _, spec := range specs {
		name, _ := lookup(spec, "name").(string)
		if name == "_id_" {
			continue
		}
		idx, declared := d.Indexes[name]
		_, dropped := d.Dropped[name]
		switch {
		case dropped:
			// reassert's difference (a dropped index present).
		case !declared:
			out = append(out, Drift{What: "index " + name, Found: keyText(keyOf(spec)),
				Message: fmt.Sprintf("%s: index %s exists, no migration creates it", d.Name, name)})
		case options && keyText(keyOf(spec)) == keyText(idx.Keys):
			out = append(out, optionDrift(d.Name, name, d.IndexFrom[name], idx, spec)...)
		}
	}
	return out, nil
}

func lookup(d bson.D, key string) any {
	v, _ := bsonx.Lookup(d, key)
	return v
}

func keyOf(spec bson.D) bson.D {
	k, _ := lookup(spec, "key").(bson.D)
	return k
}

// optionDrift compares the options of idx (other than unique, which
// Compare compares) with those listIndexes shows.
func optionDrift(coll, name string, from int64, idx migration.Index, spec bson.D) []Drift {
	declared := idx.Spec()
	var out []Drift
	for _, opt := range []string{"sparse", "hidden", "expireAfterSeconds", "partialFilterExpression"} {
		want, found := optionText(lookup(declared, opt)), optionText(lookup(spec, opt))
		if want == found {
			continue
		}
		out = append(out, Drift{What: "index " + name, Declared: opt + " " + want, Found: opt + " " + found, From: from,
			Message: fmt.Sprintf("%s: index %s has %s %s on the server; %04d creates it with %s %s", coll, name, opt, found, from, opt, want)})
	}
	return out
}

// optionText is an index option as text, absent and false alike, numbers
// as numbers whatever their BSON type.
func optionText(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case bool:
		if !x {
			return "none"
		}
		return "true"
	case int32:
		return fmt.Sprint(int64(x))
	case int64:
		return fmt.Sprint(x)
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
		return fmt.Sprint(x)
	case bson.D:
		b, err := bson.MarshalExtJSON(x, false, false)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	return fmt.Sprint(v)
}
