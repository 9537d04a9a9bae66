package serialx

import "time"

// OnConnection calls fn when the console's device disconnects
// ("disconnected", with the error as detail) and when Reconnect has
// reopened it ("reconnected", with the port's path), so that people
// watching a run hear of it as it happens. fn runs on the reading
// goroutine and must not block. remove stops the calls.
func (c *Console) OnConnection(fn func(at time.Time, event, detail string)) (remove func()) {
	c.nmu.Lock()
	defer c.nmu.Unlock()
	id := c.nextNote
	c.nextNote++
	if c.notes == nil {
		c.notes = map[int]func(time.Time, string, string){}
	}
	c.notes[id] = fn
	return func() {
		c.nmu.Lock()
		defer c.nmu.Unlock()
		delete(c.notes, id)
	}
}

// notify tells the OnConnection listeners of event.
func (c *Console) notify(event, detail string) {
	at := time.Now()
	c.nmu.Lock()
	fns := make([]func(time.Time, string, string), 0, len(c.notes))
	for _, fn := range c.notes {
		fns = append(fns, fn)
	}
	c.nmu.Unlock()
	for _, fn := range fns {
		fn(at, event, detail)
	}
}
