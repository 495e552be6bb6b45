// Package doccheck holds no code: its tests keep the documentation honest.
//
// Every Go code block in README.md and docs/*.md is quoted from a Go file that
// the build compiles, so a guide cannot drift from the API. The convention:
// the last non-blank line before the opening fence names the file, relative
// to the repository root, in an HTML comment that Markdown renderers hide:
//
//	<!-- quote: examples/lazyapp/store.go -->
//	```go
//	func (s *Store) Get(ctx context.Context, id bson.ObjectID) (User, error) {
//	...
//	```
//
// The block must equal a run of consecutive lines of that file, after the
// common leading indentation of each is removed (so a method body can be
// quoted without its tabs) and trailing spaces are ignored. No elisions: to
// show part of a function, make that part a function of its own.
//
// A Go block must name a .go file that is part of its package in this build
// (not excluded by a build constraint, not under testdata) of a package that
// has tests, or of a command (package main). A block in another language
// (YAML, say) may be quoted the same way and is then checked the same way.
// A marker followed by no code block is an error. TestDocsQuoteCompiledFiles
// checks all of this; to change a quoted passage, change the file, run its
// tests, and paste the new lines into the guide.
//
// TestExamplesStayLight checks that the examples an application copies
// (examples/...) link no test server: no internal/sandbox, FerretDB or
// SQLite package; TestLazyappImportsOnlyWhatItSays that examples/lazyapp
// imports only pkg/version, the MongoDB driver v2 and the standard library.
package doccheck
