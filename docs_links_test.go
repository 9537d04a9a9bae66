package hilrun_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// Every relative link of the README, CONTRIBUTING.md, BENCHMARKS.md and
// the pages under docs/ leads to a file that exists, and a link with a
// #fragment to a heading (or an explicit anchor) of that file, so a reader
// who follows one lands where it says, on GitHub and in an editor alike.
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(docs)
	pages := append([]string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md"}, docs...)
	anchors := map[string]map[string]bool{} // of a Markdown file, by path
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		anchors[path] = headingAnchors(string(src))
		return anchors[path]
	}
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(src)) {
			target, fragment, _ := strings.Cut(l.target, "#")
			path := page
			if target != "" {
				path = filepath.Join(filepath.Dir(page), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: the link to %s leads nowhere: %v", page, l.line, l.target, err)
					continue
				}
			}
			if fragment == "" {
				continue
			}
			if filepath.Ext(path) != ".md" {
				t.Errorf("%s:%d: the link to %s has an anchor, but %s is not a Markdown page", page, l.line, l.target, path)
				continue
			}
			if !anchorsOf(path)[fragment] {
				t.Errorf("%s:%d: the link to %s names #%s, which is no heading of %s", page, l.line, l.target, fragment, path)
			}
		}
	}
}

// The anchors GitHub gives headings, which the links above are checked
// against.
func TestHeadingAnchors(t *testing.T) {
	for _, tc := range []struct {
		name, heading, want string
	}{
		{"plain words", "## Suites and shards", "suites-and-shards"},
		{"punctuation dropped", "## Bench control: cameras, modem lines, host commands, power", "bench-control-cameras-modem-lines-host-commands-power"},
		{"code and a flag", "## Real-time scheduling: `--realtime`", "real-time-scheduling---realtime"},
		{"an apostrophe", "## What a client may do: the lab admin's minute", "what-a-client-may-do-the-lab-admins-minute"},
		{"underscores kept", "### The `serial_sequence` tool", "the-serial_sequence-tool"},
		{"a link's text", "## See [the docs](docs/README.md)", "see-the-docs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := headingAnchors(tc.heading + "\n")
			if !got[tc.want] || len(got) != 1 {
				t.Errorf("anchors of %q = %v, want %s", tc.heading, got, tc.want)
			}
		})
	}
	t.Run("repeated headings are numbered", func(t *testing.T) {
		got := headingAnchors("## Steps\n\n## Steps\n")
		if !got["steps"] || !got["steps-1"] {
			t.Errorf("anchors = %v, want steps and steps-1", got)
		}
	})
	t.Run("headings in code blocks are none", func(t *testing.T) {
		got := headingAnchors("```yaml\n# hilrun.bench.yaml\n```\n")
		if len(got) != 0 {
			t.Errorf("anchors = %v, want none", got)
		}
	})
}

type markdownLink struct {
	target string
	line   int
}

var (
	linkRE     = regexp.MustCompile(`!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	anchorRE   = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// markdownLinks returns the relative links of a Markdown text: inline links
// and images outside code, not those with a scheme (https:, mailto:). A
// link's text may wrap across the lines of a paragraph; its line is the one
// it starts on.
func markdownLinks(src string) []markdownLink {
	lines := strings.Split(src, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
			continue
		}
		// Spaces of the same length, so offsets still find the line.
		lines[i] = codeSpanRE.ReplaceAllStringFunc(l, func(c string) string { return strings.Repeat(" ", len(c)) })
	}
	// A paragraph is one text: its line breaks become spaces, and blank
	// lines, which end it, stay breaks that a link does not cross.
	var text strings.Builder
	starts := make([]int, len(lines))
	for i, l := range lines {
		starts[i] = text.Len()
		text.WriteString(l)
		if i+1 < len(lines) && strings.TrimSpace(l) != "" && strings.TrimSpace(lines[i+1]) != "" {
			text.WriteByte(' ')
		} else {
			text.WriteByte('\n')
		}
	}
	var links []markdownLink
	for _, m := range linkRE.FindAllStringSubmatchIndex(text.String(), -1) {
		target := text.String()[m[2]:m[3]]
		if schemeRE.MatchString(target) {
			continue
		}
		line := sort.SearchInts(starts, m[0]+1)
		links = append(links, markdownLink{target: target, line: line})
	}
	return links
}

// headingAnchors returns the anchors of a Markdown text's headings as
// GitHub makes them (lower case; letters, digits, hyphens and underscores
// kept, spaces made hyphens, the rest dropped; a repeated one numbered),
// and its explicit <a name> and <a id> anchors.
func headingAnchors(src string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for l := range strings.SplitSeq(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range anchorRE.FindAllStringSubmatch(l, -1) {
			anchors[m[1]] = true
		}
		text, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " ")
		if !ok || !strings.HasPrefix(l, "#") {
			continue
		}
		text = linkRE.ReplaceAllStringFunc(text, func(link string) string {
			return link[strings.Index(link, "[")+1 : strings.Index(link, "]")]
		})
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				slug.WriteRune(r)
			case r == ' ':
				slug.WriteRune('-')
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

// TestMarkdownLinksWrap: a link whose text wraps across a paragraph's
// lines is found, at the line it starts on; one in code is not, and a
// blank line ends what a link can span.
func TestMarkdownLinksWrap(t *testing.T) {
	src := "intro\nsee [the\nsection](x.md#y) and `[no](z.md)`\n\n[not\n\nlinked](w.md)\n"
	got := markdownLinks(src)
	if len(got) != 1 || got[0].target != "x.md#y" || got[0].line != 2 {
		t.Errorf("links %+v, want x.md#y at line 2 alone", got)
	}
}
