package bsonx

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// KnownList words which names exist, for an error about one that does not.
func KnownList(names []string) string {
	if len(names) == 0 {
		return "none does"
	}
	return "these do: " + strings.Join(names, ", ")
}

// OrDefault is v, or def when v is empty.
func OrDefault[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

// RandomHex is n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
