package version

// maxTracked bounds the top-level names one upgrade chain may track; a
// chain that names more upgrades each document by copying it and scanning
// per step, as ApplyOne does.
const maxTracked = 16

// keyTable maps the top-level field names an upgrade chain's declarative
// steps name (and the version field) to slots. Built once per chain; a
// lookup costs a hash of three bytes and at most a string compare or two.
type keyTable struct {
	names []string
	table [128]int8 // slot+1 by hash, linear probing; 0 is empty
}

func keyHash(k string) int {
	return (len(k)*131 + int(k[0])*31 + int(k[len(k)-1])) & 127
}

// newKeyTable returns the table of names, nil when there are too many.
func newKeyTable(names []string) *keyTable {
	if len(names) > maxTracked {
		return nil
	}
	kt := &keyTable{names: names}
	for s, n := range names {
		h := keyHash(n)
		for kt.table[h] != 0 {
			h = (h + 1) & 127
		}
		kt.table[h] = int8(s + 1)
	}
	return kt
}

// slot returns key's slot, -1 when the chain does not name it.
func (kt *keyTable) slot(key string) int {
	if key == "" {
		return -1
	}
	for h := keyHash(key); kt.table[h] != 0; h = (h + 1) & 127 {
		if s := int(kt.table[h]) - 1; kt.names[s] == key {
			return s
		}
	}
	return -1
}
