package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// splitSweep finds the top-level sweep block.
func splitSweep(d *decoder, root *yaml.Node) (*yaml.Node, *yaml.Node) {
	root = deref(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, root
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "sweep" {
			return deref(root.Content[i+1]), root
		}
	}
	return nil, root
}

func decodeSweep(d *decoder, n *yaml.Node) (*Sweep, []*yaml.Node) {
	sw := &Sweep{}
	var values []*yaml.Node
	d.Mapping(n, "sweep", map[string]fieldFn{
		"param": func(v *yaml.Node, f string) {
			if v != nil && v.Kind == yaml.SequenceNode {
				var ps []string
				d.StrList(v, f, &ps)
				sw.Param = strings.Join(ps, ",")
				return
			}
			d.Str(v, f, &sw.Param)
		},
		"metric": func(v *yaml.Node, f string) { d.Str(v, f, &sw.Metric) },
		"values": func(v *yaml.Node, f string) {
			d.Sequence(v, f, func(x *yaml.Node, xf string, _ int) {
				if s, ok := d.Scalar(x, xf); ok {
					values = append(values, x)
					sw.Values = append(sw.Values, s)
				}
			})
		},
	})
	if sw.Param == "" {
		d.Failf(n, "sweep.param", "a sweep needs the dotted path of the field to vary, e.g. links.bottleneck.queue")
	}
	if len(values) == 0 {
		d.Failf(n, "sweep.values", "a sweep needs a list of values")
	}
	return sw, values
}

// pathSegments splits "flows[nada].params.rmax" or "flows.nada.params.rmax".
func pathSegments(path string) []string {
	path = strings.NewReplacer("[", ".", "]", "").Replace(path)
	var out []string
	for _, s := range strings.Split(path, ".") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// substitute returns a copy of root with the field at path set to value.
// List items are chosen by their name field or by index; a missing final
// key is added.
func substitute(root *yaml.Node, path string, value *yaml.Node) (*yaml.Node, error) {
	segs := pathSegments(path)
	if len(segs) == 0 {
		return nil, fmt.Errorf("empty sweep path")
	}
	if segs[0] == "sweep" {
		return nil, fmt.Errorf("a sweep cannot vary itself")
	}
	budget := 200000
	out := clone(root, 0, &budget)
	if budget < 0 {
		return nil, fmt.Errorf("document too large to sweep (aliases expand to too many nodes)")
	}
	n := out
	for i, seg := range segs {
		last := i == len(segs)-1
		switch n.Kind {
		case yaml.MappingNode:
			idx := -1
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					idx = j + 1
				}
			}
			if idx < 0 {
				if !last && i+1 < len(segs) {
					// Create an intermediate mapping (e.g. params that were not set).
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: seg, Line: n.Line},
						&yaml.Node{Kind: yaml.MappingNode, Line: n.Line})
					idx = len(n.Content) - 1
				} else {
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: seg, Line: value.Line}, nil)
					idx = len(n.Content) - 1
				}
			}
			if last {
				n.Content[idx] = clone(value, 0, &budget)
				return out, nil
			}
			n = deref(n.Content[idx])
		case yaml.SequenceNode:
			idx := -1
			for j, item := range n.Content {
				if nameOf(item) == seg {
					idx = j
				}
			}
			if idx < 0 {
				if k, err := strconv.Atoi(seg); err == nil && k >= 0 && k < len(n.Content) {
					idx = k
				}
			}
			if idx < 0 {
				return nil, fmt.Errorf("%s: no list item named %q", strings.Join(segs[:i], "."), seg)
			}
			if last {
				n.Content[idx] = clone(value, 0, &budget)
				return out, nil
			}
			n = deref(n.Content[idx])
		default:
			return nil, fmt.Errorf("%s is a single value; it has no field %q", strings.Join(segs[:i], "."), seg)
		}
		if n == nil {
			return nil, fmt.Errorf("bad path %q", path)
		}
	}
	return out, nil
}

func nameOf(item *yaml.Node) string {
	item = deref(item)
	if item == nil || item.Kind != yaml.MappingNode {
		return ""
	}
	for j := 0; j+1 < len(item.Content); j += 2 {
		if item.Content[j].Value == "name" {
			return item.Content[j+1].Value
		}
	}
	return ""
}

// clone deep-copies a node tree, resolving aliases. Depth and the number
// of nodes are bounded (budget goes negative when exhausted), so alias bombs
// cannot blow up.
func clone(n *yaml.Node, depth int, budget *int) *yaml.Node {
	n = deref(n)
	*budget--
	if n == nil || depth > 64 || *budget < 0 {
		return &yaml.Node{Kind: yaml.ScalarNode}
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = clone(ch, depth+1, budget)
	}
	return &c
}
