// Package depcheck holds no code: its test enforces the import floors of
// docs/architecture.md (cmd -> internal -> pkg/runner -> pkg/version -> pkg/validator,
// pkg/migration; pkg/runner -> pkg/lease -> the driver) and keeps heavy or presentation packages out of what
// applications link.
package depcheck
