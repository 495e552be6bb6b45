// Package migration reads mongomig migration files: the file format, its
// strict checks and a checksum per file.
//
// A migration directory holds files named NNNN_snake_name.yaml (.yml and
// .json are accepted too). [Load] reads every such file from an [fs.FS], so
// both os.DirFS and embed.FS work, and returns typed [Migration] values in
// version order. Parsing is strict: an unknown key, a duplicate version, a
// collection declared twice, an empty upgrade step, an invalid
// validationLevel or malformed Extended JSON is an [*Error] naming the file,
// line and column and what to write instead. All problems of a directory are
// reported together as an [ErrorList].
//
// A directory is untrusted input. Load reads regular files only, follows a
// symbolic link only when it resolves inside the directory, and reads at
// most [DefaultMaxFileSize] bytes of a file ([WithLimits] changes it);
// Parse refuses nesting past [MaxDepth] and more than a million values
// (as written, or with aliases expanded) before anything recurses.
// Messages quote at most an 80-character excerpt of a value, and
// [Error.Location] quotes a file name holding control characters.
//
// The package parses but does not compile $jsonSchema validators (that is
// package validator) and does not run upgrades (package version); it imports
// neither, so applications can link it cheaply.
package migration
