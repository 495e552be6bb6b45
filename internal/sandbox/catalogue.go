package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// The catalogue repairs (see repair.go for the files and tables). FerretDB
// v1.24 writes a collection's row with settings "{}" and fills them in (its
// indexes, UUID, capped limits) only after it created the _id index; it
// creates an index before listing it in the settings, and drops one before
// unlisting it. After a kill, [repairCatalogue]:
//
//   - removes a collection whose settings are still "{}" if its table holds
//     no document (its creation was never acknowledged); one that holds
//     documents is left as it is;
//   - drops an index on a collection's table, named as FerretDB names them
//     (table + "_" + index name), that the settings do not list (its
//     creation was cut short, and it would make creating it again fail);
//   - unlists an index the settings list but SQLite does not have (its drop
//     was cut short; FerretDB would otherwise report an index that does
//     not enforce anything, and fail to drop it).
//
// An index holds no data of its own, so none of this loses a document.

// catalogueRow is one collection in FerretDB's catalogue.
type catalogueRow struct {
	name, table, settings string
}

func catalogueRows(conn *sql.DB) ([]catalogueRow, error) {
	rows, err := conn.QueryContext(context.Background(), "SELECT name, table_name, settings FROM "+quoteIdent(catalogue))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var res []catalogueRow
	for rows.Next() {
		var r catalogueRow
		if err := rows.Scan(&r.name, &r.table, &r.settings); err != nil {
			return nil, err
		}
		res = append(res, r)
	}
	return res, rows.Err()
}

// repairCatalogue makes the catalogue of the database on conn agree with its
// tables and indexes (see above).
func repairCatalogue(conn *sql.DB, file string) ([]string, error) {
	rows, err := catalogueRows(conn)
	if err != nil {
		return nil, err
	}
	var notices []string
	for _, r := range rows {
		if r.settings == "{}" {
			removed, err := removeHalfCreated(conn, r)
			if err != nil {
				return notices, fmt.Errorf("collection %s: %w", r.name, err)
			}
			if removed {
				notices = append(notices, fmt.Sprintf("sandbox: removed collection %s of %s: it held no documents and a process was killed while it created it", r.name, file))
			}
			continue
		}
		n, err := repairIndexes(conn, file, r)
		notices = append(notices, n...)
		if err != nil {
			return notices, fmt.Errorf("collection %s: %w", r.name, err)
		}
	}
	return notices, nil
}

// removeHalfCreated removes collection r, whose settings were never
// written, if its table holds no document.
func removeHalfCreated(conn *sql.DB, r catalogueRow) (bool, error) {
	ctx := context.Background()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	err = tx.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM "+quoteIdent(r.table)+" LIMIT 1)").Scan(&n)
	if err != nil && !strings.Contains(err.Error(), "no such table") {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoteIdent(r.table)); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+quoteIdent(catalogue)+" WHERE table_name = ?", r.table); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// repairIndexes drops the indexes of r's table its settings do not list,
// and unlists those that do not exist.
func repairIndexes(conn *sql.DB, file string, r catalogueRow) ([]string, error) {
	ctx := context.Background()
	var settings map[string]json.RawMessage
	var listed []json.RawMessage
	if err := json.Unmarshal([]byte(r.settings), &settings); err != nil {
		return nil, &DamagedError{File: file, Why: fmt.Sprintf("the settings of collection %s in its %s table are not JSON (%v)", r.name, catalogue, err)}
	}
	if raw, ok := settings["indexes"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &listed); err != nil {
			return nil, &DamagedError{File: file, Why: fmt.Sprintf("the index list of collection %s in its %s table is not a JSON array (%v)", r.name, catalogue, err)}
		}
	}
	existing, err := tableIndexes(conn, r.table)
	if err != nil {
		return nil, err
	}
	var notices []string
	keep := make([]json.RawMessage, 0, len(listed))
	names := map[string]bool{}
	for _, raw := range listed {
		var info struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, &DamagedError{File: file, Why: fmt.Sprintf("an index of collection %s in its %s table is not a JSON object (%v)", r.name, catalogue, err)}
		}
		if !existing[r.table+"_"+info.Name] {
			notices = append(notices, fmt.Sprintf("sandbox: unlisted index %s of collection %s in %s: it did not exist (a process was killed while it dropped it)", info.Name, r.name, file))
			continue
		}
		names[r.table+"_"+info.Name] = true
		keep = append(keep, raw)
	}
	if len(keep) < len(listed) {
		settings["indexes"], _ = json.Marshal(keep)
		b, _ := json.Marshal(settings)
		if _, err := conn.ExecContext(ctx, "UPDATE "+quoteIdent(catalogue)+" SET settings = ? WHERE table_name = ?", string(b), r.table); err != nil {
			return nil, err
		}
	}
	for idx := range existing {
		if names[idx] || !strings.HasPrefix(idx, r.table+"_") {
			continue // listed, or not named as FerretDB names them (ours among them)
		}
		if _, err := conn.ExecContext(ctx, "DROP INDEX "+quoteIdent(idx)); err != nil {
			return notices, err
		}
		notices = append(notices, fmt.Sprintf("sandbox: dropped index %s of collection %s in %s: the collection did not list it (a process was killed while it created it)", strings.TrimPrefix(idx, r.table+"_"), r.name, file))
	}
	return notices, nil
}

// tableIndexes lists the indexes created on table (not those SQLite makes
// for a UNIQUE constraint).
func tableIndexes(conn interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, table string) (map[string]bool, error) {
	rows, err := conn.QueryContext(context.Background(), "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	res := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		res[name] = true
	}
	return res, rows.Err()
}
