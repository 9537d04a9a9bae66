package steps

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"gopkg.in/yaml.v3"
)

// raw builds the node of JSON text, at token under spot parent, reading
// it token by token: its keys keep the order they are written in, and the
// limits apply as it is read, before a large tree is built.
func (t *valueTree) raw(data json.RawMessage, parent int, token string, depth int) (*yaml.Node, error) {
	if len(data) > MaxValueBytes {
		return nil, t.failAt(t.child(parent, token), "the JSON text is larger than %d MiB (the size limit): split it, or use repeat: for steps that repeat", MaxValueBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := t.readJSON(dec, parent, token, depth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, t.failAt(t.child(parent, token), "invalid JSON: more after the value")
	}
	return n, nil
}

// readJSON reads one JSON value from dec.
func (t *valueTree) readJSON(dec *json.Decoder, parent int, token string, depth int) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, t.syntax(t.child(parent, token), err)
	}
	p, err := t.at(parent, token)
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		return t.readObject(dec, p, depth)
	case json.Delim('['):
		return t.readArray(dec, p, depth)
	}
	n, err := t.scalar(tok, p)
	if err != nil {
		return nil, err
	}
	return n, t.text(p, len(n.Value))
}

func (t *valueTree) readObject(dec *json.Decoder, p, depth int) (*yaml.Node, error) {
	if err := t.deep(p, depth+1); err != nil {
		return nil, err
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: p}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, t.syntax(t.pointer(p), err)
		}
		key, _ := tok.(string) // the decoder allows only strings here
		val, err := t.readJSON(dec, p, key, depth+1)
		if err != nil {
			return nil, err
		}
		if err := t.text(p, len(key)); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, strNode(key, val.Line), val)
	}
	return n, t.end(dec, p)
}

func (t *valueTree) readArray(dec *json.Decoder, p, depth int) (*yaml.Node, error) {
	if err := t.deep(p, depth+1); err != nil {
		return nil, err
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: p}
	for i := 0; dec.More(); i++ {
		c, err := t.readJSON(dec, p, strconv.Itoa(i), depth+1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, c)
	}
	return n, t.end(dec, p)
}

// end reads the delimiter that closes the object or array at spot p.
func (t *valueTree) end(dec *json.Decoder, p int) error {
	if _, err := dec.Token(); err != nil {
		return t.syntax(t.pointer(p), err)
	}
	return nil
}

// syntax is a JSON syntax error at ptr.
func (t *valueTree) syntax(ptr string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return t.failAt(ptr, "invalid JSON: the text ends inside a value")
	}
	return t.failAt(ptr, "invalid JSON: %v", err)
}
