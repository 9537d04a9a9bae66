// The library verbs: searching the registry, installing, updating and
// uninstalling a project's libraries, and listing them.

package pio

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Library is one search result of `pio pkg search`.
type Library struct {
	Owner string `json:"owner"`
	Name  string `json:"name"`
	// Type is Library, Tool or Platform, with the registry's tier when it
	// is not community ("Official Library").
	Type        string `json:"type"`
	Version     string `json:"version"`
	Published   string `json:"published"`
	Description string `json:"description"`
}

// SearchResult is a page of `pio pkg search`.
type SearchResult struct {
	Total     int       `json:"total"`
	Page      int       `json:"page"`
	Pages     int       `json:"pages"`
	Libraries []Library `json:"libraries"`
}

var (
	searchFound = regexp.MustCompile(`^Found (\d+) packages \(page (\d+) of (\d+)\)`)
	searchName  = regexp.MustCompile(`^([\w.\-]+)/(\S+)$`)
	searchMeta  = regexp.MustCompile(`^(.+?) • (\S+) • Published on (.+)$`)
)

// SearchLibraries runs `pio pkg search "type:library QUERY" [-p page]`.
// PlatformIO answers in text only; this reads it.
func (c *Client) SearchLibraries(ctx context.Context, query string, page int) (*SearchResult, error) {
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: query is required", ErrInvalid)
	}
	args := []string{"pkg", "search", "type:library " + query}
	if page > 1 {
		args = append(args, "-p", strconv.Itoa(page))
	}
	out, err := c.run(ctx, "", args)
	if err != nil {
		return nil, err
	}
	if !out.OK() {
		return nil, failed(out)
	}
	return ParseSearch(out.Text)
}

// ParseSearch reads the text of `pio pkg search`.
func ParseSearch(text string) (*SearchResult, error) {
	res := &SearchResult{Libraries: []Library{}}
	if strings.Contains(text, "Nothing has been found") {
		return res, nil
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r", ""), "\n")
	found := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if m := searchFound.FindStringSubmatch(l); m != nil {
			res.Total, _ = strconv.Atoi(m[1])
			res.Page, _ = strconv.Atoi(m[2])
			res.Pages, _ = strconv.Atoi(m[3])
			found = true
			continue
		}
		m := searchName.FindStringSubmatch(l)
		if !found || m == nil || i+1 >= len(lines) {
			continue
		}
		meta := searchMeta.FindStringSubmatch(strings.TrimSpace(lines[i+1]))
		if meta == nil {
			continue
		}
		lib := Library{Owner: m[1], Name: m[2], Type: meta[1], Version: meta[2], Published: meta[3]}
		if i+2 < len(lines) {
			lib.Description = strings.TrimSpace(lines[i+2])
		}
		res.Libraries = append(res.Libraries, lib)
		i += 2
	}
	if !found {
		return nil, errors.New("pio pkg search: no \"Found N packages\" line in its output")
	}
	return res, nil
}

// LibraryVerb is install, uninstall or update.
type LibraryVerb string

const (
	Install   LibraryVerb = "install"
	Uninstall LibraryVerb = "uninstall"
	Update    LibraryVerb = "update"
)

// Library runs `pio pkg VERB -d dir [-e env] -l spec`, always on the
// project in dir, never globally. install and uninstall save the change to
// platformio.ini, as PlatformIO does by default.
func (c *Client) Library(ctx context.Context, verb LibraryVerb, dir, env, spec string) (*Output, error) {
	switch verb {
	case Install, Uninstall, Update:
	default:
		return nil, fmt.Errorf("%w: library verb %q", ErrInvalid, verb)
	}
	if strings.TrimSpace(spec) == "" || strings.HasPrefix(spec, "-") {
		return nil, fmt.Errorf("%w: library %q: give a library name or specification (owner/name@^1.2.3)", ErrInvalid, spec)
	}
	if err := CheckProject(dir, env); err != nil {
		return nil, err
	}
	args := append(append([]string{"pkg", string(verb)}, projectArgs(dir, env)...), "-l", spec)
	return c.run(ctx, "", args)
}

// InstalledLibrary is one library of a project environment.
type InstalledLibrary struct {
	Env     string `json:"env"`
	Name    string `json:"name"`
	Version string `json:"version"`
	// Required is the specification it was installed for ("Any").
	Required string `json:"required"`
	// Depth is 0 for a library of lib_deps, 1 for its dependencies...
	Depth int `json:"depth"`
}

var (
	pkgResolving = regexp.MustCompile(`^Resolving (\S+) dependencies\.\.\.`)
	pkgTreeLine  = regexp.MustCompile(`^((?:│   |    )*)(?:├──|└──) (\S+) @ (\S+) \(required: ([^,)]*)`)
)

// ListLibraries runs `pio pkg list -d dir [-e env] --only-libraries`.
// PlatformIO answers in text only; this reads its tree.
func (c *Client) ListLibraries(ctx context.Context, dir, env string) ([]InstalledLibrary, error) {
	if err := CheckProject(dir, env); err != nil {
		return nil, err
	}
	args := append(append([]string{"pkg", "list"}, projectArgs(dir, env)...), "--only-libraries")
	out, err := c.run(ctx, "", args)
	if err != nil {
		return nil, err
	}
	if !out.OK() {
		return nil, failed(out)
	}
	return ParseLibraryList(out.Text), nil
}

// ParseLibraryList reads the text of `pio pkg list --only-libraries`.
func ParseLibraryList(text string) []InstalledLibrary {
	libs := []InstalledLibrary{}
	env := ""
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		if m := pkgResolving.FindStringSubmatch(l); m != nil {
			env = m[1]
			continue
		}
		if m := pkgTreeLine.FindStringSubmatch(l); m != nil {
			libs = append(libs, InstalledLibrary{Env: env, Name: m[2], Version: m[3], Required: strings.TrimSpace(m[4]),
				Depth: len([]rune(m[1])) / 4})
		}
	}
	return libs
}
