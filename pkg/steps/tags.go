package steps

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// MaxTags bounds the tags of one sequence or group.
const MaxTags = 64

// ValidTag reports whether s can be a tag: letters, digits, "_", "-" and
// ".", starting with a letter or "_", and none of the words of a -m
// expression (and, or, not).
func ValidTag(s string) bool {
	if s == "" || s == "and" || s == "or" || s == "not" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// tags reads a tags: list (of a sequence or a group): names as ValidTag
// has them, each once.
func (d *decoder) tags(n *yaml.Node) []string {
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), "tags must be a list of names, like [smoke, slow], found %s", kindName(n))
		return nil
	}
	if len(n.Content) > MaxTags {
		d.add(d.pos(n), "%d tags, more than the limit of %d", len(n.Content), MaxTags)
		return nil
	}
	var out []string
	for _, c := range n.Content {
		c = resolve(c)
		s, ok := d.str(c, "a tag")
		if !ok {
			continue
		}
		switch {
		case !ValidTag(s):
			d.add(d.pos(c), "tag %q must be letters, digits, _, - and ., starting with a letter, and not and, or or not", s)
		case slices.Contains(out, s):
			d.add(d.pos(c), "tag %q is listed twice", s)
		default:
			out = append(out, s)
		}
	}
	return out
}

// Selected is a sequence, or one of its groups, as selection sees it:
// what -k, -m and a quarantine list read to decide whether it runs.
type Selected struct {
	Seq *Sequence
	// Step is the group, nil for the sequence itself.
	Step *Step
	// Tags are its own and those of the groups and the sequence around
	// it, in that order outward, each once.
	Tags []string
	// Path are the names of the groups around it, outermost first, its
	// own last; empty for the sequence.
	Path []string
}

// Deselect returns seq with every group for which skip gives a reason
// marked to be skipped with it (Step.Skip), or seq itself so marked when
// skip gives one for the sequence (Step nil), which is asked first. A
// group skipped is not looked into; finally steps are never skipped. seq
// itself is not changed: what is marked, and the groups and lists around
// it, are copies. When skip gives no reason at all, Deselect returns seq.
func Deselect(seq *Sequence, skip func(Selected) string) *Sequence {
	if why := skip(Selected{Seq: seq, Tags: seq.Tags}); why != "" {
		c := *seq
		c.Skip = why
		return &c
	}
	list, changed := deselectList(seq, seq.Steps, seq.Tags, nil, skip)
	if !changed {
		return seq
	}
	c := *seq
	c.Steps = list
	return &c
}

func deselectList(seq *Sequence, ss []*Step, tags, path []string, skip func(Selected) string) ([]*Step, bool) {
	var out []*Step
	for i, s := range ss {
		ns := deselectStep(seq, s, tags, path, skip)
		if ns != s && out == nil {
			out = slices.Clone(ss)
		}
		if out != nil {
			out[i] = ns
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

// deselectStep is Deselect for one step: s itself, or a copy.
func deselectStep(seq *Sequence, s *Step, tags, path []string, skip func(Selected) string) *Step {
	if !IsContainer(s.Kind) {
		return s
	}
	inner := tags
	if s.Kind == KindGroup {
		inner = UnionTags(s.Tags, tags)
		path = append(slices.Clip(path), s.Name)
		if why := skip(Selected{Seq: seq, Step: s, Tags: inner, Path: path}); why != "" {
			c := *s
			c.Skip = why
			return &c
		}
	}
	list, changed := deselectList(seq, s.Steps, inner, path, skip)
	if !changed {
		return s
	}
	c := *s
	c.Steps = list
	return &c
}

// UnionTags is a's tags, then those of b that a lacks.
func UnionTags(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, t := range b {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Groups calls fn for every group of seq's steps (not its finally steps),
// parents before their children, with the group's tags as Selected has
// them and the names of the groups around it.
func Groups(seq *Sequence, fn func(Selected)) {
	var walk func(ss []*Step, tags, path []string)
	walk = func(ss []*Step, tags, path []string) {
		for _, s := range ss {
			inner, p := tags, path
			if s.Kind == KindGroup {
				inner = UnionTags(s.Tags, tags)
				p = append(slices.Clip(path), s.Name)
				fn(Selected{Seq: seq, Step: s, Tags: inner, Path: p})
			}
			walk(s.Steps, inner, p)
		}
	}
	walk(seq.Steps, seq.Tags, nil)
}
