//go:build unix

// Package cdp drives a headless Chromium through the DevTools protocol, for
// tests that check what a page shows after its scripts ran: the DOM, the
// console errors, a screenshot. It talks over --remote-debugging-pipe
// (JSON messages separated by NUL bytes on file descriptors 3 and 4), so
// it needs no port and no websocket.
package cdp

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Browser is a running headless Chromium with one page.
type Browser struct {
	cmd     *exec.Cmd
	w       io.WriteCloser
	session string

	mu      sync.Mutex
	next    int
	waiting map[int]chan reply
	events  []Event
	notify  chan struct{}
	err     error
	done    chan struct{}
}

// Event is a DevTools event the page sent.
type Event struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type reply struct {
	Result json.RawMessage
	Err    error
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start runs chromium (the path of the program) headless with a page of
// width x height CSS pixels, and attaches to that page with the runtime,
// log and page domains on.
func Start(ctx context.Context, chromium string, width, height int) (*Browser, error) {
	dir, err := os.MkdirTemp("", "hilrun-cdp-")
	if err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	toBrowser, ourW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	ourR, fromBrowser, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--no-default-browser-check", "--disable-extensions", "--remote-debugging-pipe",
		"--user-data-dir="+dir, fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // fds 3 and 4
	// Its own process group, so that Close ends its helper processes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	b := &Browser{cmd: cmd, w: ourW, waiting: map[int]chan reply{}, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go b.read(ourR, dir)

	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := b.Call(ctx, "Target.getTargets", nil, &targets); err != nil {
		b.Close()
		return nil, err
	}
	target := ""
	for _, t := range targets.TargetInfos {
		if t.Type == "page" {
			target = t.TargetID
		}
	}
	if target == "" {
		var created struct {
			TargetID string `json:"targetId"`
		}
		if err := b.Call(ctx, "Target.createTarget", map[string]any{"url": "about:blank"}, &created); err != nil {
			b.Close()
			return nil, err
		}
		target = created.TargetID
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, &att); err != nil {
		b.Close()
		return nil, err
	}
	b.session = att.SessionID
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.Call(ctx, m, nil, nil); err != nil {
			b.Close()
			return nil, err
		}
	}
	if err := b.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Browser) read(r io.ReadCloser, dir string) {
	defer os.RemoveAll(dir)
	defer close(b.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.err = fmt.Errorf("chromium closed its pipe: %w", err)
			for _, ch := range b.waiting {
				ch <- reply{Err: b.err}
			}
			b.waiting = map[int]chan reply{}
			b.mu.Unlock()
			r.Close()
			return
		}
		var m message
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.waiting[m.ID]; ok {
				delete(b.waiting, m.ID)
				rp := reply{Result: m.Result}
				if m.Error != nil {
					rp.Err = fmt.Errorf("devtools: %s (%d)", m.Error.Message, m.Error.Code)
				}
				ch <- rp
			}
		} else if m.Method != "" {
			b.events = append(b.events, Event{Method: m.Method, Params: m.Params})
			select {
			case b.notify <- struct{}{}:
			default:
			}
		}
		b.mu.Unlock()
	}
}

// Call sends a DevTools command to the page (or to the browser before
// Start attached) and decodes its result into out, if not nil.
func (b *Browser) Call(ctx context.Context, method string, params any, out any) error {
	var p json.RawMessage
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		p = raw
	}
	ch := make(chan reply, 1)
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return b.err
	}
	b.next++
	id := b.next
	b.waiting[id] = ch
	raw, _ := json.Marshal(message{ID: id, Method: method, Params: p, SessionID: b.session})
	_, err := b.w.Write(append(raw, 0))
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("devtools %s: %w", method, err)
	}
	select {
	case rp := <-ch:
		if rp.Err != nil {
			return fmt.Errorf("devtools %s: %w", method, rp.Err)
		}
		if out != nil {
			return json.Unmarshal(rp.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("devtools %s: %w", method, ctx.Err())
	}
}

// Navigate loads url and waits for its load event.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	b.mu.Lock()
	seen := len(b.events)
	b.mu.Unlock()
	if err := b.Call(ctx, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		return err
	}
	_, err := b.WaitEvent(ctx, seen, "Page.loadEventFired")
	return err
}

// WaitEvent waits for an event named method after the first `after` events.
func (b *Browser) WaitEvent(ctx context.Context, after int, method string) (Event, error) {
	for {
		b.mu.Lock()
		for _, e := range b.events[min(after, len(b.events)):] {
			if e.Method == method {
				b.mu.Unlock()
				return e, nil
			}
		}
		err := b.err
		b.mu.Unlock()
		if err != nil {
			return Event{}, err
		}
		select {
		case <-b.notify:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("wait for %s: %w", method, ctx.Err())
		}
	}
}

// Eval evaluates a JavaScript expression in the page, awaiting it when it
// is a promise, and decodes its value (as JSON) into out.
func (b *Browser) Eval(ctx context.Context, expr string, out any) error {
	var res struct {
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := b.Call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if err != nil {
		return err
	}
	if e := res.ExceptionDetails; e != nil {
		msg := e.Text
		if e.Exception != nil {
			msg = e.Exception.Description
		}
		return fmt.Errorf("evaluate %q: %s", expr, msg)
	}
	if out == nil {
		return nil
	}
	if len(res.Result.Value) == 0 {
		return fmt.Errorf("evaluate %q: no value (%s)", expr, res.Result.Type)
	}
	return json.Unmarshal(res.Result.Value, out)
}

// Screenshot returns a PNG of the page, the whole page when full.
func (b *Browser) Screenshot(ctx context.Context, full bool) ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := b.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": full}, &res); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(res.Data)
}

// Errors lists what the page reported as errors: console.error calls,
// uncaught exceptions and error log entries (a refused network request
// among them).
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			if json.Unmarshal(e.Params, &p) == nil && (p.Type == "error" || p.Type == "assert") {
				out = append(out, fmt.Sprintf("console.%s: %v", p.Type, p.Args))
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level, Text, URL string
				} `json:"entry"`
			}
			if json.Unmarshal(e.Params, &p) == nil && p.Entry.Level == "error" {
				out = append(out, "log: "+p.Entry.Text+" "+p.Entry.URL)
			}
		}
	}
	return out
}

// Close ends the browser and waits for it; it is idempotent.
func (b *Browser) Close() error {
	if b.cmd == nil {
		return nil
	}
	b.w.Close()
	if b.cmd.Process != nil {
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	}
	err := b.cmd.Wait()
	<-b.done
	b.cmd = nil
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // killed
	}
	return err
}
