package report

import (
	"bytes"
	"fmt"
	"slices"
)

// consoleOutput prints the complete lines in data, holding back an unfinished
// last line until more output or the end of the step.
func (c *Console) consoleOutput(console string, data []byte) {
	if c.partial == nil {
		c.partial = make(map[string][]byte)
	}
	pending := append(c.partial[console], data...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(pending, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, pending[:i])
		pending = pending[i+1:]
	}
	if len(pending) > partialLineLimit {
		lines = append(lines, pending)
		pending = nil
	}
	c.partial[console] = bytes.Clone(pending)
	if len(lines) == 0 {
		return
	}
	c.clearRunning()
	for _, l := range lines {
		c.outputLine(console, "│", l)
	}
	c.drawRunning()
}

// consoleInput prints what was sent to a console.
func (c *Console) consoleInput(console string, data []byte) {
	c.clearRunning()
	c.outputLine(console, "←", bytes.TrimRight(data, "\r\n"))
	c.drawRunning()
}

// flushPartial prints the unfinished lines verbose mode held back.
func (c *Console) flushPartial() {
	if len(c.partial) == 0 {
		return
	}
	c.clearRunning()
	names := make([]string, 0, len(c.partial))
	for name := range c.partial {
		names = append(names, name)
	}
	// Map order is random; sort for stable output.
	slices.Sort(names)
	for _, name := range names {
		if len(c.partial[name]) > 0 {
			c.outputLine(name, "│", c.partial[name])
		}
	}
	c.partial = nil
}

func (c *Console) outputLine(console, sep string, line []byte) {
	text := cleanText(string(bytes.TrimSuffix(line, []byte("\r"))))
	fmt.Fprintf(&c.buf, "      %s\n", c.paint(ansiDim, cleanLine(console)+" "+sep+" "+text))
	c.wrote = true
}

// clearRunning erases the transient line, if one is shown.
func (c *Console) clearRunning() {
	if c.running == "" {
		return
	}
	if c.held() {
		c.running = "" // writeOut clears what is on screen
		return
	}
	c.buf.WriteString(ansiClearLine)
	c.running = ""
}

// drawRunning shows the transient line again after other output. It writes no
// newline, so the next clearRunning can erase it.
func (c *Console) drawRunning() {
	if c.running != "" && !c.held() {
		c.buf.WriteString(c.paint(ansiDim, c.running))
	}
}
