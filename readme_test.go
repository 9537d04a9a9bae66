package hilrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/qemu/qemutest"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// Every example in the README and in the reference under docs/ is run, or
// validated when it needs hardware, so a reader who copies one gets what
// the page shows. An example that none of the rules below can check fails
// the test until it is listed in readmeUnchecked with the reason it cannot
// be checked.
//
// The rules:
//   - a yaml block is a sequence or a bench file (a "# hilrun.bench.yaml"
//     comment or only bench keys), loaded with the real loader; a block of
//     sequence keys without steps is loaded as a sequence fragment; a
//     GitHub Actions workflow's run: lines are commands;
//   - a json block parses; a list is a serial_sequence step list and loads
//     as one; an mcpServers configuration's hilrun arguments parse as
//     hilrun's flags;
//   - inline JSON objects in the prose (`{"mem_read": true, ...}`) are
//     serial_sequence steps and load as such;
//   - a console or sh command line that runs hilrun (hilrun, ./hilrun,
//     go run ./cmd/hilrun, or after a "--") runs in-process through
//     cli.Main when it needs no hardware (--sim, --qemu, validate, schema,
//     ports, version, --list); a run that needs a bench is validated with
//     the same files instead, and a server (mcp, sim) has its flags parsed;
//     output shown under a command must appear in the real output, with
//     timings, pids, ports, ptys and time stamps left out and "..." lines
//     standing for any number of lines;
//   - a plain block that shows the command line synopsis names only flags
//     that exist; one that shows the layout names only folders that exist;
//     a drawing (box lines, arrows) names only Go names its packages
//     declare (plan.Bind, internal/engine.NewBench).
//
// Files a console example uses without showing them (bad.yaml,
// doubling.yaml) are in testdata/readme, written to give the output shown;
// a file a page shows in a yaml block that begins with "# NAME.yaml" and
// then uses (my-board.yaml) is there too, and must equal the block.
//
// Commands run in the repository's root, as the pages say, with WIFI_PSK
// in the environment, as the pages' secrets examples take it from a
// pipeline's.
func TestReadmeExamples(t *testing.T) {
	t.Setenv("WIFI_PSK", "hunter22-psk")
	used := map[string]bool{}
	unchecked := func(t *testing.T, key string) bool {
		if _, ok := readmeUnchecked[key]; ok {
			used[key] = true
			t.Logf("not checked: %s: %s", key, readmeUnchecked[key])
			return true
		}
		return false
	}
	inlineSteps := 0
	for _, file := range docFiles(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.ReplaceAll(file, "/", "_"), func(t *testing.T) {
			for _, b := range readmeBlocks(file, string(src)) {
				t.Run(fmt.Sprintf("line%d_%s", b.line, b.lang), func(t *testing.T) {
					if unchecked(t, firstLine(b.text)) {
						return
					}
					switch b.lang {
					case "yaml":
						checkYAMLBlock(t, b, unchecked)
					case "json":
						checkJSONBlock(t, b)
					case "console", "sh":
						checkCommandBlock(t, b, unchecked)
					case "":
						checkPlainBlock(t, b)
					default:
						t.Errorf("%s: a %q block, which no rule checks: run it by a rule of TestReadmeExamples or list it in readmeUnchecked with a reason", b.pos(), b.lang)
					}
				})
			}
			t.Run("inline_json", func(t *testing.T) { inlineSteps += checkInlineJSON(t, file, string(src)) })
		})
	}
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		return // some examples did not run
	}
	if inlineSteps == 0 {
		t.Error("the pages show no serial_sequence step in JSON; was the rule broken?")
	}
	for key := range readmeUnchecked {
		if !used[key] {
			t.Errorf("readmeUnchecked lists %q, which is no longer on any page: remove it", key)
		}
	}
}

// docFiles returns the pages whose examples TestReadmeExamples checks: the
// README and the reference under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no pages under docs/: %v", err)
	}
	slices.Sort(docs)
	return append([]string{"README.md"}, docs...)
}

// readmeUnchecked holds the README's examples that no test can run or
// validate, keyed by the block's first line or the command line, each
// with the reason.
var readmeUnchecked = map[string]string{
	"hilrun run --sim --log-dir /mnt/small full.yaml":                                                          "needs a small file system mounted at /mnt/small (root); internal/cli's TestFullLogDisk runs the same on a 64 KiB tmpfs",
	"serial_send {console: \"dut\", text: \"version\"}     -> {\"cursor\": 1834, \"bytes\": 8}":                "MCP tool calls in shorthand, not JSON; the tools are tested in pkg/mcpserver",
	"hilrun run --sim --shard 2/3 --durations last.json --junit shard-2.xml --json shard-2.json sequences/sim": "needs the durations report and the shards of earlier runs; internal/cli's TestShardsMergeToSingleRun runs these commands on the virtual board and compares the merge with one run",
	"hilrun validate --pool lab.pool.yaml sequences/     # every sequence against every bench":                 "needs a lab's pool file and its boards; internal/cli's pool tests run --pool on eight virtual boards",
	"$ hilrun pio check-project -d fw -e uno":                                                                  "needs PlatformIO, which is not installable here; pkg/pio and internal/cli's pio tests run these verbs on recorded PlatformIO output",
	"$ hilrun bench discover --write hilrun.bench.yaml":                                                        "needs boards on USB; internal/cli's TestBenchDiscover runs bench discover on recorded sysfs trees and compares its output and bench file with golden files",
	"bench /home/me/bench/hilrun.bench.yaml: the health check failed before serial_sequence: timed out after 2s waiting for \"alive\"; nothing received: recovered by rung 2 (reset run)": "the text of an MCP tool result; pkg/mcpserver's TestBenchLadder makes the climb on the virtual board and checks the result's text",
	"connection: &dut":  "ser2net's own configuration (ser2net.yaml) on a lab host, not hilrun's; internal/ser2net's tests start the real ser2net with files of this form",
	"# quarantine.yaml": "a quarantine list, not a sequence: the --list command below it reads it from testdata/readme, and internal/cli's TestMatrixAndQuarantineReachEveryReport runs one into every report",
}

type readmeBlock struct {
	file string // the page, relative to the repository's root
	lang string
	text string
	line int // of the opening fence, 1-based
}

// pos is the block's place for messages: FILE:LINE.
func (b readmeBlock) pos() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// readmeBlocks returns the fenced blocks of a Markdown page, indented ones
// (inside list items) with their indentation removed.
func readmeBlocks(file, src string) []readmeBlock {
	var blocks []readmeBlock
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		b := readmeBlock{file: file, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1}
		var body []string
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "```" {
				break
			}
			l := lines[i]
			if len(l)-len(strings.TrimLeft(l, " ")) >= indent {
				l = l[indent:]
			}
			body = append(body, l)
		}
		b.text = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, b)
	}
	return blocks
}

func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

var benchTopKeys = []string{"devices", "probes", "cameras", "power", "health", "recover"}

func checkYAMLBlock(t *testing.T, b readmeBlock, unchecked func(*testing.T, string) bool) {
	var doc any
	if err := yaml.Unmarshal([]byte(b.text), &doc); err != nil {
		t.Fatalf("%s: the yaml block does not parse: %v", b.pos(), err)
	}
	checkShownFixture(t, b)
	dir := t.TempDir()
	top, isMap := doc.(map[string]any)
	switch {
	case !isMap:
		// A bare list of steps is a sequence too.
		loadSequence(t, b, dir, b.text, "")
	case top["jobs"] != nil:
		checkWorkflow(t, b, top, unchecked)
	case top["benches"] != nil:
		loadPool(t, b, dir, top)
	case strings.HasPrefix(firstLine(b.text), "# hilrun.bench.yaml"):
		loadBench(t, b, dir)
	case top["steps"] == nil && onlyKeys(top, benchTopKeys):
		// Bench keys alone: a bench file, or the head of a sequence.
		path := filepath.Join(dir, "hilrun.bench.yaml")
		writeExample(t, path, b.text)
		if _, err := steps.LoadBench(files.Anywhere(), path); err != nil {
			loadSequence(t, b, dir, b.text+"steps: []\n", "as a bench file: "+err.Error())
		}
	case top["steps"] == nil:
		loadSequence(t, b, dir, b.text+"steps: []\n", "")
	default:
		loadSequence(t, b, dir, b.text, "")
	}
}

// shownFileRE matches the comment that names the file a yaml block shows:
// "# my-board.yaml".
var shownFileRE = regexp.MustCompile(`^# ([A-Za-z0-9_-]+\.ya?ml)$`)

// checkShownFixture checks that a file a page shows and then uses, kept in
// testdata/readme for the commands that use it, is the file shown.
func checkShownFixture(t *testing.T, b readmeBlock) {
	m := shownFileRE.FindStringSubmatch(firstLine(b.text))
	if m == nil {
		return
	}
	kept, err := os.ReadFile(filepath.Join("testdata/readme", m[1]))
	if err != nil {
		return // shown only, not used by a command
	}
	if string(kept) != b.text {
		t.Errorf("%s: the page shows %s, and testdata/readme/%s differs from it: make them equal", b.pos(), m[1], m[1])
	}
}

func onlyKeys(m map[string]any, keys []string) bool {
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return len(m) > 0
}

func writeExample(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadPool loads a pool file example with the real loader; the bench files
// it names stand in as empty benches, as the README's name a lab's.
func loadPool(t *testing.T, b readmeBlock, dir string, top map[string]any) {
	benches, _ := top["benches"].([]any)
	for _, e := range benches {
		m, _ := e.(map[string]any)
		if f, ok := m["bench"].(string); ok {
			path := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			writeExample(t, path, "devices: {}\n")
		}
	}
	path := filepath.Join(dir, "lab.pool.yaml")
	writeExample(t, path, b.text)
	if _, err := steps.LoadPool(files.Anywhere(), path); err != nil {
		t.Errorf("%s: the pool file example does not load:\n%v", b.pos(), err)
	}
}

func loadBench(t *testing.T, b readmeBlock, dir string) {
	path := filepath.Join(dir, "hilrun.bench.yaml")
	writeExample(t, path, b.text)
	if _, err := steps.LoadBench(files.Anywhere(), path); err != nil {
		t.Errorf("%s: the bench file example does not load:\n%v", b.pos(), err)
	}
}

// loadSequence loads a sequence example with the real loader. It does not
// bind it: the README's sequences name ports, probes and ELF files of a
// bench that is not here.
func loadSequence(t *testing.T, b readmeBlock, dir, text, also string) {
	path := filepath.Join(dir, "example.yaml")
	writeExample(t, path, text)
	if _, err := steps.Load(files.Anywhere(), path, steps.LoadOptions{}); err != nil {
		if also != "" {
			err = fmt.Errorf("%w\n(and %s)", err, also)
		}
		t.Errorf("%s: the sequence example does not load:\n%v", b.pos(), err)
	}
}

// checkWorkflow runs the hilrun commands of a CI workflow example's run:
// lines.
func checkWorkflow(t *testing.T, b readmeBlock, top map[string]any, unchecked func(*testing.T, string) bool) {
	var runs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["run"].(string); ok {
				runs = append(runs, r)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(top)
	n := 0
	for _, r := range runs {
		for l := range strings.SplitSeq(r, "\n") {
			if args, ok := hilrunArgs(t, l); ok {
				n++
				if !unchecked(t, strings.TrimSpace(l)) {
					checkCommand(t, b, strings.TrimSpace(l), args, nil)
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: a workflow that runs no hilrun command", b.pos())
	}
}

func checkJSONBlock(t *testing.T, b readmeBlock) {
	var v any
	if err := json.Unmarshal([]byte(b.text), &v); err != nil {
		t.Fatalf("%s: the json block does not parse: %v", b.pos(), err)
	}
	switch v := v.(type) {
	case []any:
		loadSteps(t, b.pos(), b.text)
	case map[string]any:
		if !checkMCPConfig(t, b.pos(), v) {
			t.Errorf("%s: a JSON object that is not an mcpServers configuration: give it a rule in TestReadmeExamples", b.pos())
		}
	default:
		t.Errorf("%s: a JSON %T, which no rule checks", b.pos(), v)
	}
}

// checkMCPConfig checks an MCP client's configuration: a server it starts
// runs hilrun with arguments that parse; one it reaches over HTTP has a
// URL. It reports false when v is no such configuration.
func checkMCPConfig(t *testing.T, pos string, v map[string]any) bool {
	t.Helper()
	servers, ok := v["mcpServers"].(map[string]any)
	if !ok {
		return false
	}
	for name, s := range servers {
		var srv struct {
			Command string
			Args    []string
			URL     string
		}
		raw, _ := json.Marshal(s)
		if err := json.Unmarshal(raw, &srv); err != nil {
			t.Errorf("%s: server %s: %v", pos, name, err)
			continue
		}
		switch {
		case srv.Command == "hilrun":
			checkFlags(t, pos, srv.Args)
		case srv.Command == "" && strings.HasSuffix(srv.URL, "/mcp"):
		default:
			t.Errorf("%s: server %s neither runs hilrun nor reaches it at a URL ending in /mcp", pos, name)
		}
	}
	return true
}

// loadSteps loads a JSON list of serial_sequence steps as a sequence file
// that is a bare list.
func loadSteps(t *testing.T, pos string, text string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "steps.json")
	writeExample(t, path, text)
	if _, err := steps.Load(files.Anywhere(), path, steps.LoadOptions{}); err != nil {
		t.Errorf("%s: the serial_sequence steps do not load:\n%v", pos, err)
	}
}

// isStep reports whether a JSON object names a step kind among its keys
// (delay_ms, the form of other MCP servers, included).
func isStep(obj map[string]any) bool {
	for _, k := range steps.Kinds() {
		for _, key := range k.Keys {
			if _, ok := obj[key]; ok {
				return true
			}
		}
	}
	_, ok := obj["delay_ms"]
	return ok
}

var jsonShapeRE = regexp.MustCompile(`^\{"[a-z_]+", `)

var inlineJSONRE = regexp.MustCompile("`(\\{\"[^`]*\\})`")

// checkInlineJSON loads the JSON objects the prose of a page shows in
// backquotes as serial_sequence steps (the forms of other MCP servers
// included), and returns how many it loaded.
func checkInlineJSON(t *testing.T, file, src string) int {
	// Outside fenced blocks, a span may wrap over a line break.
	var prose strings.Builder
	fenced := false
	for i, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			fmt.Fprintf(&prose, "\x00%d\x00%s ", i+1, l)
		}
	}
	lineRE := regexp.MustCompile("\x00(\\d+)\x00")
	text := prose.String()
	n := 0
	for _, m := range inlineJSONRE.FindAllStringSubmatchIndex(text, -1) {
		before := lineRE.FindAllStringSubmatch(text[:m[0]], -1)
		line := before[len(before)-1][1]
		span := lineRE.ReplaceAllString(text[m[2]:m[3]], "")
		if jsonShapeRE.MatchString(span) {
			continue // a report's shape, its fields listed: {"t", "us", "dir": "rx"}
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(span), &obj); err != nil {
			t.Errorf("%s:%s: %s does not parse as JSON: %v", file, line, span, err)
			continue
		}
		pos := file + ":" + line
		if checkMCPConfig(t, pos, obj) {
			continue
		}
		if !isStep(obj) {
			t.Errorf("%s: %s is JSON that no rule checks (not a serial_sequence step, not an MCP configuration): give it a rule in TestReadmeExamples", pos, span)
			continue
		}
		n++
		loadSteps(t, pos, "["+span+"]")
	}
	return n
}

// A console or sh block: command lines, in a console block each after a
// "$ " with the output it shows under it.
func checkCommandBlock(t *testing.T, b readmeBlock, unchecked func(*testing.T, string) bool) {
	type command struct {
		line    string
		comment string // after " # "
		output  []string
	}
	var cmds []*command
	for l := range strings.SplitSeq(strings.TrimRight(b.text, "\n"), "\n") {
		if b.lang == "sh" {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
				cmds = append(cmds, &command{line: stripComment(l)})
			}
			continue
		}
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			cmd := &command{line: stripComment(c)}
			if _, after, ok := strings.Cut(c, " # "); ok {
				cmd.comment = strings.TrimSpace(after)
			}
			cmds = append(cmds, cmd)
			continue
		}
		if len(cmds) == 0 {
			t.Fatalf("%s: a console block that does not start with a \"$ \" command line", b.pos())
		}
		last := cmds[len(cmds)-1]
		last.output = append(last.output, l)
	}
	dir := t.TempDir() // files a command writes, for the next ones
	n := 0
	lastCode := -1 // of the last command run, -1 when it was not run
	for _, c := range cmds {
		ex := &exampleRun{dir: dir, output: c.output, comment: c.comment}
		line := c.line
		// printf 'TEXT' | hilrun ...: TEXT is standard input.
		if m := printfPipeRE.FindStringSubmatch(line); m != nil {
			ex.stdin = []byte(strings.ReplaceAll(m[1], `\n`, "\n"))
			line = m[2]
		}
		// hilrun ...; echo $?: the last line shown is the exit code.
		if rest, ok := strings.CutSuffix(line, "; echo $?"); ok && len(ex.output) > 0 {
			line = rest
			ex.code = strings.TrimSpace(ex.output[len(ex.output)-1])
			ex.output = ex.output[:len(ex.output)-1]
		}
		args, ok := hilrunArgs(t, line)
		if !ok {
			switch {
			case makeRE.MatchString(c.line):
				buildFirmware(t, b, makeRE.FindStringSubmatch(c.line)[1])
			case strings.HasPrefix(c.line, "cat "):
				checkCat(t, b, dir, c.line, c.output)
			case c.line == "echo $?" && lastCode >= 0:
				if want := strings.TrimSpace(strings.Join(c.output, "\n")); want != fmt.Sprint(lastCode) {
					t.Errorf("%s: echo $? shows %s, but the command exited %d", b.pos(), want, lastCode)
				}
			}
			continue
		}
		n++
		lastCode = -1
		if unchecked(t, c.line) {
			continue
		}
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			lastCode = checkCommand(t, b, c.line, args, ex)
			if ex.code != "" && ex.code != fmt.Sprint(lastCode) {
				t.Errorf("%s: %s: echo $? shows %s, but the command exited %d", b.pos(), c.line, ex.code, lastCode)
			}
		})
	}
	if n == 0 {
		t.Errorf("%s: a %s block that runs no hilrun command: give it a rule or list it in readmeUnchecked", b.pos(), b.lang)
	}
}

var (
	printfPipeRE = regexp.MustCompile(`^printf '([^']*)' \| (.*)$`)
	makeRE       = regexp.MustCompile(`^make -C (\S+)$`)
)

// buildFirmware runs make -C dir as the README says. It builds into the
// folder's own build/ (ignored by git), where the example sequences look
// for their ELF files.
func buildFirmware(t *testing.T, b readmeBlock, dir string) {
	if filepath.Clean(dir) != filepath.Join("firmware", "qemu") {
		t.Fatalf("%s: make -C %s: only firmware/qemu is built by this test", b.pos(), dir)
	}
	qemutest.BuildInTree(t)
}

// stripComment removes a trailing shell comment ("  # ...").
func stripComment(l string) string {
	if i := strings.Index(l, " #"); i >= 0 && !strings.Contains(l[:i], "'") {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// hilrunArgs splits a command line that runs hilrun into hilrun's
// arguments.
func hilrunArgs(t *testing.T, line string) ([]string, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "hilrun ") && !strings.HasPrefix(line, "./hilrun ") &&
		!strings.HasPrefix(line, "go run ./cmd/hilrun ") && !strings.Contains(line, " -- hilrun ") {
		return nil, false
	}
	words, err := shellWords(line)
	if err != nil {
		t.Errorf("%s: %v", line, err)
		return nil, false
	}
	if i := slices.Index(words, "--"); i >= 0 && i+1 < len(words) && words[i+1] == "hilrun" {
		return words[i+2:], true
	}
	var args []string
	switch {
	case len(words) >= 1 && (words[0] == "hilrun" || words[0] == "./hilrun"):
		args = words[1:]
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/hilrun":
		args = words[3:]
	default:
		return nil, false
	}
	// The shell's globs, in the repository's root.
	var out []string
	for _, a := range args {
		if strings.ContainsAny(a, "*?[") && !strings.HasPrefix(a, "-") {
			if m, _ := filepath.Glob(a); len(m) > 0 {
				out = append(out, m...)
				continue
			}
		}
		out = append(out, a)
	}
	return out, true
}

// shellWords splits a command line as sh would, for the quoting the
// README uses: single and double quotes and plain words.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '|' || c == ';' || c == '>' || c == '<' || c == '&' || c == '$' || c == '`':
			return nil, fmt.Errorf("shell syntax %q that the README examples rule does not run", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// exampleRun is what a console block shows about a command.
type exampleRun struct {
	dir    string   // the block's folder for files it writes
	output []string // the output shown under the command
	stdin  []byte   // what a printf pipes into it, or nil
	code   string   // the exit code an "; echo $?" shows, or ""
	// comment is what the command line says after " # ".
	comment string
}

// checkCommand runs or validates one hilrun command line and returns its
// exit code when it ran, or -1.
func checkCommand(t *testing.T, b readmeBlock, line string, args []string, ex *exampleRun) int {
	t.Helper()
	if len(args) == 0 {
		t.Errorf("%s: %s: no hilrun command", b.pos(), line)
		return -1
	}
	cmd, rest := findCommand(t, b.pos(), args)
	if cmd == nil {
		return -1
	}
	sim := hasFlag(rest, "sim")
	qemu := hasFlag(rest, "qemu") || hasFlag(rest, "qemu-bios")
	switch name := cmd.Name(); {
	case name == "sim" && ex != nil && len(ex.output) > 0:
		checkSimServer(t, b, line, args, ex)
		return -1
	case name == "mcp" && ex != nil && len(ex.output) > 0:
		checkMCPCall(t, b, line, args, ex)
		return -1
	case name == "mcp" || name == "sim":
		// Servers run until stopped: their flags must parse, and a bench
		// file they name must load.
		if bench := flagValue(rest, "bench"); bench != "" {
			if _, err := os.Stat(bench); err == nil {
				expectCode(t, b, line, cli.ExitPassed, hilrunIn(t, "", nil, "validate", bench))
			}
		}
		return -1
	case (name == "run" || name == "repl") && needsBench(rest, sim || qemu) && !hasFlag(rest, "list"):
		// A bench is needed: validate the same files with the same
		// bindings, in testdata/readme when they are kept there.
		if len(positional(cmd, rest)) == 0 {
			return -1 // a repl without a file: its flags parsed
		}
		vargs := []string{"validate"}
		vargs = append(vargs, bindingFlags(rest)...)
		vargs = append(vargs, positional(cmd, rest)...)
		dir := ""
		if ex != nil && needsFixture(args) {
			dir = "testdata/readme"
		}
		expectCode(t, b, line, cli.ExitPassed, hilrunIn(t, dir, nil, vargs...))
		return -1
	case name == "repl" && ex != nil:
		return checkRepl(t, b, line, args, ex)
	}
	if qemu {
		testenv.NeedTool(t, "qemu-system-arm", "apt-get install qemu-system-arm")
		for _, f := range []string{flagValue(rest, "qemu"), flagValue(rest, "qemu-bios")} {
			if _, err := os.Stat(f); f != "" && err != nil {
				if strings.HasPrefix(f, "/usr/") {
					testenv.Missing(t, "%s is not installed (apt-get install u-boot-qemu): %v", f, err)
				}
				t.Errorf("%s: %s: %v (an example that needs a firmware image builds it first, with make -C)", b.pos(), line, err)
				return -1
			}
		}
	}
	dir, args := "", rewriteLogDir(t, args)
	if ex != nil && needsFixture(args) {
		dir = "testdata/readme"
	}
	if ex != nil && usesBlockFile(args, ex.dir) {
		dir = ex.dir
	}
	var stdin []byte
	if ex != nil {
		stdin = ex.stdin
	}
	r := hilrunIn(t, dir, stdin, args...)
	if ex == nil || len(ex.output) == 0 {
		expectCode(t, b, line, cli.ExitPassed, r)
	} else {
		checkOutput(t, b, line, ex.output, r.out)
	}
	return r.code
}

// serve runs a hilrun server in-process until stop says its output is
// complete (or 30 s pass, which fails the test), then ends it by closing
// its standard input and its context. It returns the output.
func serve(t *testing.T, args []string, in io.Reader, closeIn func(), stop func(out string) bool) string {
	t.Helper()
	var out testenv.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := cli.NewRoot(&cli.IO{In: in, Out: &out, ErrOut: &out})
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(30 * time.Second) // only an upper bound for a hang
	for !stop(out.String()) {
		select {
		case err := <-done:
			t.Fatalf("hilrun %s ended before it printed what the README shows: %v\n%s", strings.Join(args, " "), err, out.String())
		case <-limit:
			t.Fatalf("hilrun %s: what the README shows did not come in 30 s:\n%s", strings.Join(args, " "), out.String())
		case <-tick.C:
		}
	}
	closeIn()
	cancel()
	<-done
	return out.String()
}

// checkSimServer runs hilrun sim until it has printed as many lines as
// the README shows for it, and compares them.
func checkSimServer(t *testing.T, b readmeBlock, line string, args []string, ex *exampleRun) {
	if strings.Contains(strings.Join(ex.output, "\n"), `"openocd":true`) {
		testenv.NeedTool(t, "openocd", "apt-get install openocd")
	}
	out := serve(t, args, strings.NewReader(""), func() {}, func(out string) bool {
		return strings.Count(out, "\n") >= len(ex.output)
	})
	checkOutput(t, b, line, ex.output, out)
}

// checkMCPCall runs hilrun mcp over standard input and output, has a
// client call serial_sequence with the step the command's comment names
// ("# a client sends {JSON}"), and checks that the result's text shows
// what the README shows.
func checkMCPCall(t *testing.T, b readmeBlock, line string, args []string, ex *exampleRun) {
	_, step, ok := strings.Cut(ex.comment, "a client sends ")
	if !ok || !json.Valid([]byte(step)) {
		t.Errorf("%s: %s shows output, but its comment does not say what a client sends (# a client sends {JSON step})", b.pos(), line)
		return
	}
	pr, pw := io.Pipe()
	go func() {
		for _, msg := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"serial_sequence","arguments":{"steps":[` + step + `]}}}`,
		} {
			if _, err := io.WriteString(pw, msg+"\n"); err != nil {
				return
			}
		}
	}()
	out := serve(t, args, pr, func() { pw.Close() }, func(out string) bool {
		return strings.Contains(out, `"id":2,`)
	})
	var text []string
	for l := range strings.SplitSeq(out, "\n") {
		var resp struct {
			ID     int
			Result struct{ Content []struct{ Text string } }
		}
		if json.Unmarshal([]byte(l), &resp) == nil && resp.ID == 2 {
			for _, c := range resp.Result.Content {
				text = append(text, c.Text)
			}
		}
	}
	checkOutput(t, b, line, ex.output, strings.Join(text, "\n"))
}

type hilrunResult struct {
	code int
	out  string // standard output and error, as they interleaved
}

// hilrunIn runs hilrun in-process in dir (relative to the repository's
// root, "" for the root itself).
func hilrunIn(t *testing.T, dir string, stdin []byte, args ...string) hilrunResult {
	t.Helper()
	if dir != "" {
		if !filepath.IsAbs(dir) {
			wd, _ := os.Getwd()
			dir = filepath.Join(wd, dir)
		}
		t.Chdir(dir)
	}
	var out bytes.Buffer
	code := cli.Main(args, bytes.NewReader(stdin), &out, &out)
	return hilrunResult{code: code, out: out.String()}
}

func expectCode(t *testing.T, b readmeBlock, line string, want int, r hilrunResult) {
	t.Helper()
	if r.code != want {
		t.Errorf("%s: %s: exit %d, want %d\n%s", b.pos(), line, r.code, want, r.out)
	}
}

// findCommand finds hilrun's subcommand for args and checks that its
// flags parse; it returns the rest of the arguments.
func findCommand(t *testing.T, pos string, args []string) (*cobra.Command, []string) {
	t.Helper()
	var sink bytes.Buffer
	root := cli.NewRoot(&cli.IO{In: strings.NewReader(""), Out: &sink, ErrOut: &sink})
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Errorf("%s: hilrun %s: %v", pos, strings.Join(args, " "), err)
		return nil, nil
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: hilrun %s: %v", pos, strings.Join(args, " "), err)
		return nil, nil
	}
	return cmd, rest
}

// checkFlags checks that hilrun's arguments name a command and flags that
// exist.
func checkFlags(t *testing.T, pos string, args []string) {
	t.Helper()
	findCommand(t, pos, args)
}

// needsBench reports whether a run or repl needs a real bench: it starts
// no virtual board, or binds a device or probe to something real.
func needsBench(args []string, virtual bool) bool {
	return !virtual || hasFlag(args, "port") || hasFlag(args, "openocd") || hasFlag(args, "gdb") || hasFlag(args, "bench")
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// bindingFlags keeps the flags of a run that validate takes too.
func bindingFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		for _, f := range []string{"--var", "--port", "--openocd", "--gdb", "--bench"} {
			if args[i] == f && i+1 < len(args) {
				out = append(out, args[i], args[i+1])
			} else if strings.HasPrefix(args[i], f+"=") {
				out = append(out, args[i])
			}
		}
	}
	return out
}

// positional returns the arguments of args that are not flags or their
// values.
func positional(cmd *cobra.Command, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := cmd.Flags().Lookup(name)
		if f == nil && len(name) == 1 {
			f = cmd.Flags().ShorthandLookup(name)
		}
		if f != nil && f.NoOptDefVal == "" {
			i++ // its value
		}
	}
	return out
}

// rewriteLogDir moves a relative --log-dir, and a relative --measurements
// file, into the test's temporary folder, so examples do not write into
// the repository.
func rewriteLogDir(t *testing.T, args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if (a == "--log-dir" || a == "--measurements") && i+1 < len(out) && !filepath.IsAbs(out[i+1]) {
			out[i+1] = filepath.Join(t.TempDir(), out[i+1])
		}
	}
	return out
}

// needsFixture reports whether args name a file that is not in the
// repository but in testdata/readme.
func needsFixture(args []string) bool {
	for _, a := range args {
		if _, err := os.Stat(a); err == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join("testdata/readme", a)); err == nil {
			return true
		}
	}
	return false
}

// usesBlockFile reports whether args name a file an earlier command of the
// same block wrote.
func usesBlockFile(args []string, dir string) bool {
	for _, a := range args {
		if _, err := os.Stat(filepath.Join(dir, a)); err == nil && !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

// checkCat compares a file an earlier command of the block wrote with what
// the block shows.
func checkCat(t *testing.T, b readmeBlock, dir, line string, output []string) {
	name := strings.TrimSpace(strings.TrimPrefix(line, "cat "))
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Errorf("%s: %s: %v", b.pos(), line, err)
		return
	}
	checkOutput(t, b, line, output, string(got))
}

// checkRepl feeds the lines typed after the "hilrun> " prompts of a repl
// session to hilrun repl in script mode, in the block's folder; script
// mode echoes them after "hilrun> " too. Where the device's output shows
// among hilrun's lines depends on timing (a script does not wait for the
// boot banner), so the device's lines and hilrun's are compared apart,
// and the device's prompt is left out.
func checkRepl(t *testing.T, b readmeBlock, line string, args []string, ex *exampleRun) int {
	stdin := ex.stdin
	if stdin == nil {
		var typed []string
		for _, l := range ex.output {
			if in, ok := strings.CutPrefix(l, "hilrun> "); ok {
				typed = append(typed, in)
			}
		}
		stdin = []byte(strings.Join(typed, "\n") + "\n")
	}
	r := hilrunIn(t, ex.dir, stdin, args...)
	if r.code != cli.ExitPassed && ex.code == "" {
		t.Errorf("%s: %s: exit %d\n%s", b.pos(), line, r.code, r.out)
	}
	// The board's boot banner, shown before hilrun says it is connected,
	// is caught only when the port opens before the board prints it.
	shown := withoutPrompts(ex.output)
	for len(shown) > 0 && isConsoleLine(shown[0]) {
		shown = shown[1:]
	}
	shownDev, shownOwn := splitConsole(shown)
	realDev, realOwn := splitConsole(withoutPrompts(strings.Split(r.out, "\n")))
	checkOutput(t, b, line, shownOwn, strings.Join(realOwn, "\n"))
	checkOutput(t, b, line, shownDev, strings.Join(realDev, "\n"))
	return r.code
}

func isConsoleLine(l string) bool {
	f := strings.Fields(l)
	return len(f) > 0 && strings.HasSuffix(f[0], "│")
}

// splitConsole parts the device's lines ("NAME│ ...") from the others.
func splitConsole(lines []string) (dev, own []string) {
	for _, l := range lines {
		if isConsoleLine(l) {
			dev = append(dev, l)
		} else {
			own = append(own, l)
		}
	}
	return dev, own
}

var consolePromptRE = regexp.MustCompile(`^(\S+│) ?(sim> ?)+`)

func withoutPrompts(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = consolePromptRE.ReplaceAllString(l, "$1 ")
		if strings.HasSuffix(l, "│") || strings.HasSuffix(l, "│ ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Parts of output that differ from run to run.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\[\+\d+\.\d+s\]`), "[+T]"},
	// Measured timings have a decimal point; durations in messages
	// (like 100ms) have none and stay.
	{regexp.MustCompile(`\b\d+\.\d+(ms|µs|us|s)\b`), "D"},
	{regexp.MustCompile(`(/[^\s/"]+)+/\d{8}T\d{6}Z`), "DIR/STAMP"},
	{regexp.MustCompile(`/dev/pts/\d+`), "/dev/pts/N"},
	{regexp.MustCompile(`/hilrun-([a-z]+)-\d+/`), "/hilrun-$1-N/"},
	{regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`), "$1:PORT"},
	{regexp.MustCompile(`"pid":\d+`), `"pid":N`},
	// The virtual board's millisecond counter, at 0x20000000.
	{regexp.MustCompile(`(counter|uptime_ms): \d+`), "$1: N"},
	{regexp.MustCompile(`0x20000000: 0x[0-9a-f]{8}`), "0x20000000: 0xN"},
}

var spaces = regexp.MustCompile(`\s+`)

// normLine leaves out of a line what differs between runs, and collapses
// the padding between columns (it depends on the widths of timings).
func normLine(l string) string {
	for _, v := range volatile {
		l = v.re.ReplaceAllString(l, v.with)
	}
	trimmed := strings.TrimLeft(l, " ")
	indent := l[:len(l)-len(trimmed)]
	return indent + strings.TrimSpace(spaces.ReplaceAllString(trimmed, " "))
}

// stillRunningRE matches the console report's notice of a step still
// running after 10 s (see report.Console).
var stillRunningRE = regexp.MustCompile(`^\s*… step .*: still running after \d+s`)

// isElision reports whether a line of the README's output stands for lines
// left out.
func isElision(l string) bool {
	l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "│"))
	return l == "..." || l == "…"
}

// checkOutput checks that the lines shown appear in the real output: runs
// of lines in a row, the runs in order, "..." lines between runs standing
// for any lines; "..." or "…" inside a line stands for any text.
func checkOutput(t *testing.T, b readmeBlock, line string, shown []string, real string) {
	t.Helper()
	var got []string
	for l := range strings.SplitSeq(strings.TrimRight(real, "\n"), "\n") {
		if stillRunningRE.MatchString(l) {
			// A step slower than 10 s (ffmpeg starting on a saturated
			// machine) gets a notice in a log that is not a terminal;
			// it comes from the machine's load, not from the example.
			continue
		}
		got = append(got, normLine(l))
	}
	var runs [][]*regexp.Regexp
	var texts [][]string
	cur, curText := []*regexp.Regexp(nil), []string(nil)
	for _, l := range shown {
		if isElision(l) {
			if len(cur) > 0 {
				runs, texts = append(runs, cur), append(texts, curText)
			}
			cur, curText = nil, nil
			continue
		}
		n := strings.ReplaceAll(normLine(l), "…", "...")
		parts := strings.Split(n, "...")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		cur = append(cur, regexp.MustCompile("^"+strings.Join(parts, ".*")+"$"))
		curText = append(curText, l)
	}
	if len(cur) > 0 {
		runs, texts = append(runs, cur), append(texts, curText)
	}
	pos := 0
	for ri, run := range runs {
		found := -1
		for start := pos; start+len(run) <= len(got) && found < 0; start++ {
			ok := true
			for j, re := range run {
				if !re.MatchString(got[start+j]) {
					ok = false
					break
				}
			}
			if ok {
				found = start
			}
		}
		if found < 0 {
			t.Errorf("%s: %s: the README shows\n%s\nbut hilrun printed (normalised)\n%s",
				b.pos(), line, strings.Join(texts[ri], "\n"), strings.Join(got, "\n"))
			return
		}
		pos = found + len(run)
	}
}

// checkPlainBlock checks the blocks without a language: the command line
// synopsis names flags that exist, and the layout names folders that
// exist.
func checkPlainBlock(t *testing.T, b readmeBlock) {
	first := firstLine(b.text)
	switch {
	case strings.HasPrefix(first, "hilrun "):
		checkSynopsis(t, b)
	case strings.HasPrefix(first, "cmd/"):
		for l := range strings.SplitSeq(b.text, "\n") {
			f := strings.Fields(l)
			if len(f) == 0 {
				continue
			}
			if _, err := os.Stat(f[0]); err != nil {
				t.Errorf("%s: the layout names %s: %v", b.pos(), f[0], err)
			}
		}
	case isDrawing(b.text):
		checkDrawing(t, b)
	default:
		t.Errorf("%s: a block without a language that no rule checks (%q): give it a language and a rule, or list it in readmeUnchecked with a reason", b.pos(), first)
	}
}

var synopsisFlagRE = regexp.MustCompile(`(?:^|[\s\[|])(--?[A-Za-z][A-Za-z0-9-]*)`)

func checkSynopsis(t *testing.T, b readmeBlock) {
	var sink bytes.Buffer
	root := cli.NewRoot(&cli.IO{In: strings.NewReader(""), Out: &sink, ErrOut: &sink})
	root.InitDefaultCompletionCmd()
	var cmd *cobra.Command
	for l := range strings.SplitSeq(b.text, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		if rest, ok := strings.CutPrefix(l, "hilrun "); ok {
			// The command and its subcommands: the leading words that are
			// not flags.
			var words []string
			for _, w := range strings.Fields(rest) {
				if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || strings.ToUpper(w) == w {
					break
				}
				words = append(words, w)
			}
			name := strings.Join(words, " ")
			c, _, err := root.Find(words)
			if err != nil || c == root {
				t.Errorf("%s: the synopsis shows hilrun %s, which is no command", b.pos(), name)
				cmd = nil
				continue
			}
			cmd = c
			l = rest
		}
		if cmd == nil {
			continue
		}
		for _, m := range synopsisFlagRE.FindAllStringSubmatch(l, -1) {
			name := m[1]
			var ok bool
			if long, isLong := strings.CutPrefix(name, "--"); isLong {
				ok = cmd.Flags().Lookup(long) != nil || cmd.InheritedFlags().Lookup(long) != nil
			} else {
				short := strings.TrimPrefix(name, "-")
				ok = len(short) == 1 && (cmd.Flags().ShorthandLookup(short) != nil || cmd.InheritedFlags().ShorthandLookup(short) != nil)
			}
			if !ok {
				t.Errorf("%s: the synopsis of hilrun %s shows %s, which it does not take", b.pos(), cmd.Name(), name)
			}
		}
	}
}
