package runner

// The server checked against the files, for status: the validator, level,
// action and indexes (keys and options) of every collection of the
// applied migrations, as listCollections and listIndexes show them,
// compared with what the applied migrations declare. The comparison is
// reassert's (reassert_diff.go: what a takeover would put back), plus
// what reassert leaves alone: indexes no migration names, and index
// options other than unique. Status only reads.

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// ServerDifference is one way the server differs from what the applied
// migrations declare for a collection (drift of the server).
type ServerDifference struct {
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

// diffLog collects the differences reassertCommands logs.
type diffLog []events.StateDiffers

func (l *diffLog) Log(e events.Entry) {
	if d, ok := e.(events.StateDiffers); ok {
		*l = append(*l, d)
	}
}

// stateDiffs is reassert's comparison of d with s, as data.
func (r *Runner) stateDiffs(d declaredState, s serverState) []events.StateDiffers {
	var log diffLog
	quiet := *r
	quiet.cfg.log = &log
	quiet.reassertCommands(d, s)
	return log
}

// serverDrift sets each collection's ServerDrift, or st.ServerUnchecked
// when the declared state cannot be known.
func (r *Runner) serverDrift(ctx context.Context, st *Status) error {
	top := maxApplied(st.applied)
	if top == 0 {
		return nil
	}
	if reason := r.uncheckable(st.applied, top); reason != "" {
		st.ServerUnchecked = reason
		return nil
	}
	states, err := r.declaredStates(ctx, st.applied, top)
	if err != nil {
		return err
	}
	server, err := r.serverStates(ctx, states)
	if err != nil {
		return err
	}
	// FerretDB v1 (the embedded sandbox) lists no index option but unique
	// (a quirk: MongoDB lists each option an index was built with), so the
	// other options are compared only elsewhere.
	options := true
	if info, err := probe.Server(ctx, r.db); err == nil && info.FerretDBVersion != "" {
		options = false
	}
	byName := map[string]*CollectionStatus{}
	for i := range st.Collections {
		byName[st.Collections[i].Name] = &st.Collections[i]
	}
	for _, d := range states {
		cs := byName[d.name]
		if cs == nil {
			continue
		}
		s := server[d.name]
		_, levelFrom, _, actionFrom := r.declaredSettings(d.name, top, st.applied)
		for _, e := range r.stateDiffs(d, s) {
			if (e.What == "validationLevel" && levelFrom == 0) || (e.What == "validationAction" && actionFrom == 0) {
				continue // none declared: the collection keeps the server's
			}
			if e.What == "validationLevel" {
				e.From = levelFrom
			}
			if e.What == "validationAction" {
				e.From = actionFrom
			}
			cs.ServerDrift = append(cs.ServerDrift, differenceOf(e))
		}
		if !s.exists {
			continue
		}
		more, err := r.indexDrift(ctx, d, options)
		if err != nil {
			return err
		}
		cs.ServerDrift = append(cs.ServerDrift, more...)
	}
	return nil
}

// differenceOf words one of reassert's differences.
func differenceOf(e events.StateDiffers) ServerDifference {
	sd := ServerDifference{What: e.What, Declared: e.Declared, Found: e.Found, From: e.From}
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

// indexDrift is what reassert does not compare: indexes no applied
// migration names, and the options (other than unique) of the declared
// ones whose keys match (options false: the server does not list them).
func (r *Runner) indexDrift(ctx context.Context, d declaredState, options bool) ([]ServerDifference, error) {
	cur, err := r.db.Collection(d.name).Indexes().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the indexes of %s: %w", d.name, err)
	}
	var specs []bson.D
	if err := cur.All(ctx, &specs); err != nil {
		return nil, fmt.Errorf("list the indexes of %s: %w", d.name, err)
	}
	var out []ServerDifference
	for _, spec := range specs {
		name, _ := lookup(spec, "name").(string)
		if name == "_id_" {
			continue
		}
		idx, declared := d.indexes[name]
		_, dropped := d.dropped[name]
		switch {
		case dropped:
			// reassert's difference (a dropped index present).
		case !declared:
			out = append(out, ServerDifference{What: "index " + name, Found: keyText(keyOf(spec)),
				Message: fmt.Sprintf("%s: index %s exists, no migration creates it", d.name, name)})
		case options && keyText(keyOf(spec)) == keyText(idx.Keys):
			out = append(out, optionDrift(d.name, name, d.indexFrom[name], idx, spec)...)
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
// reassert compares) with those listIndexes shows.
func optionDrift(coll, name string, from int64, idx migration.Index, spec bson.D) []ServerDifference {
	declared := bsonx.IndexSpec(idx)
	var out []ServerDifference
	for _, opt := range []string{"sparse", "hidden", "expireAfterSeconds", "partialFilterExpression"} {
		want, found := optionText(lookup(declared, opt)), optionText(lookup(spec, opt))
		if want == found {
			continue
		}
		out = append(out, ServerDifference{What: "index " + name, Declared: opt + " " + want, Found: opt + " " + found, From: from,
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
		return docText(x)
	}
	return fmt.Sprint(v)
}
