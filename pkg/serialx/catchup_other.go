//go:build !linux

package serialx

import "errors"

// countable is false: outside Linux a network port reads through conn.Read
// and cannot say what its socket holds.
const countable = false

func (p *netPort) readConn(buf []byte) (int, error) { return p.conn.Read(buf) }

func (p *netPort) rawReceived() (int64, error) {
	return 0, errors.New("the socket cannot say what it holds")
}
