// Package migrations embeds the sample application's migrations (a small
// shop and blog: users, orders, posts, comments), used by `mongomig demo`,
// the documentation and the tests.
package migrations

import "embed"

// FS holds the sample migration files at its root.
//
//go:embed *.yaml
var FS embed.FS
