package runner

import (
	"github.com/hilrun/hilrun/pkg/stream"
)

// promptSet is a device's prompt compiled as the steps race it: after a
// line break (DevicePrompt) and where a reply begins (atReplyStart).
type promptSet struct {
	line, reply       stream.Pattern
	ok                bool
	lineErr, replyErr error
}

// staticPrompt is the compiled prompt of device name when it has one with
// no ${} reference, compiled once per run and shared by its branches:
// each is a regexp, whose compiling would cost a send more than all the
// runner does for it besides. nil when the prompt has references (it is
// compiled with the values of the moment) or the device has none.
func (r *run) staticPrompt(name string) *promptSet {
	dev := r.seq.Device(name)
	if dev == nil || dev.Prompt == nil || !dev.Prompt.Text.IsStatic() {
		return nil
	}
	r.promptMu.Lock()
	defer r.promptMu.Unlock()
	if ps := r.prompts[name]; ps != nil {
		return ps
	}
	ps := &promptSet{}
	ps.line, ps.ok, ps.lineErr = DevicePrompt(dev, r.lookup)
	if ps.lineErr == nil {
		ps.reply, ps.replyErr = atReplyStart(r.rawPrompt(name))
	}
	if r.prompts == nil {
		r.prompts = map[string]*promptSet{}
	}
	r.prompts[name] = ps
	return ps
}

// replyPrompt is device name's prompt where a reply begins (atReplyStart);
// call it after prompt found one.
func (r *run) replyPrompt(name string) (stream.Pattern, error) {
	if ps := r.staticPrompt(name); ps != nil {
		return ps.reply, ps.replyErr
	}
	return atReplyStart(r.rawPrompt(name))
}
