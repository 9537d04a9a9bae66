package repl

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// complete is the line editor's Tab completion: commands first, then
// device and probe names, ELF symbols and file names by command.
func (s *Session) complete(line string, pos int, key rune) (string, int, bool) {
	if key != '\t' {
		return "", 0, false
	}
	head := line[:pos]
	start := strings.LastIndexAny(head, " \t") + 1
	word := head[start:]
	var cands []string
	if strings.TrimSpace(head[:start]) == "" {
		for _, h := range commandHelp {
			cands = append(cands, h.name)
		}
		for _, h := range metaHelp {
			cands = append(cands, h.name)
		}
	} else {
		cmd := strings.Fields(head)[0]
		switch cmd {
		case "use":
			cands = s.deviceNames()
		case "read", "write":
			cands = s.symbols
		case "run", ":record", ":raw":
			cands = pathsFrom(word)
		default:
			cands = append(s.deviceNames(), s.probeNames()...)
		}
	}
	var match []string
	for _, c := range cands {
		if strings.HasPrefix(c, word) {
			match = append(match, c)
		}
	}
	if len(match) == 0 {
		return "", 0, false
	}
	sort.Strings(match)
	common := match[0]
	for _, m := range match[1:] {
		for !strings.HasPrefix(m, common) {
			common = common[:len(common)-1]
		}
	}
	if len(match) == 1 && !strings.HasSuffix(common, "/") {
		common += " "
	}
	if common == word && len(match) > 1 {
		// Nothing more to add: show the choices above the prompt. The
		// editor holds its lock while completing, so print afterwards.
		go s.t.Write([]byte(strings.Join(match, "  ") + "\n"))
		return "", 0, false
	}
	newLine := head[:start] + common + line[pos:]
	return newLine, start + len(common), true
}

// pathsFrom lists the paths that begin with prefix, folders ending in "/".
func pathsFrom(prefix string) []string {
	dir, base := filepath.Split(prefix)
	d := dir
	if d == "" {
		d = "."
	}
	ents, err := os.ReadDir(d)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), base) || strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		p := dir + e.Name()
		if e.IsDir() {
			p += "/"
		}
		out = append(out, p)
	}
	return out
}
