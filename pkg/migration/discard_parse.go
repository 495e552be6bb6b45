package migration

import (
	"go.yaml.in/yaml/v3"
)

// stepDiscard separates a step's `discard:` key from its operation: ops is
// the step's mapping without it; discard its value; key the key's node
// (nil when the step has none).
func (p *parser) stepDiscard(item *yaml.Node, ptr string) (ops *yaml.Node, discard bool, key *yaml.Node) {
	ops = &yaml.Node{Kind: item.Kind, Tag: item.Tag, Line: item.Line, Column: item.Column}
	for i := 0; i+1 < len(item.Content); i += 2 {
		k, v := deref(item.Content[i]), deref(item.Content[i+1])
		if k.Kind == yaml.ScalarNode && k.Value == "discard" && key == nil {
			key = k
			p.pos[ptr+"/discard"] = posOf(k)
			discard = p.boolean(v, "discard")
			continue
		}
		ops.Content = append(ops.Content, item.Content[i], item.Content[i+1])
	}
	return ops, discard, key
}

// checkDiscardKey accepts `discard:` only on the upgrade steps that can
// discard stored data ([Discards]): unset and set.
func (p *parser) checkDiscardKey(k *yaml.Node, what string, op Op) bool {
	switch {
	case what != "upgrade":
		p.errorf(k, "remove it: discard marks upgrade steps that remove stored data; down reverts on purpose", "discard on a %s step", what)
		return false
	case op != OpUnset && op != OpSet:
		p.errorf(k, "remove it: only unset and set steps can discard stored data (a rename or copy refuses to overwrite a value, default only fills what is missing)", "discard on a %s step", op)
		return false
	}
	return true
}
