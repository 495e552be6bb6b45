// Package lint checks a migration directory without a database: the file
// format and numbering (package migration), every validator against
// MongoDB's $jsonSchema dialect (package validator), steps that would write
// the version field (package version), each collection's examples
// (upgrade(before) must equal after, and after must satisfy the validator
// in force), closed schemas that would refuse every document, and unique
// indexes that MongoDB may fail to build.
//
//	rep, err := lint.Lint(migrationsFS, version.WithFunc("splitName", SplitName))
//	if err != nil { ... } // the directory could not be read
//	for _, p := range rep.Problems {
//		fmt.Println(p.Location(), p.Severity, p.Message)
//	}
//
// It owns [Report] and [Problem], which runner.New returns (in
// runner.InvalidFilesError) for a directory that does not lint, and the
// command line prints or writes as JSON.
//
// Invariants: [Lint] returns an error only when the directory itself
// cannot be read; every problem in a file is in the report, at the file's
// line and column when known ([Problem.Location]), sorted by file, line and
// column. One run reports every problem: files that do not parse are
// checked as far as they could be read. Only errors make a directory
// invalid ([Report.OK]); warnings do not. The package never connects,
// prints or exits, and imports none of the packages that apply migrations
// (pkg/runner imports it).
package lint
