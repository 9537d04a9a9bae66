package report

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// writeResult completes r (ids, labels, console attachments) and writes it.
func (a *allureWriter) writeResult(r *allureResult, key string) {
	if a.err != nil {
		return
	}
	s := &a.seq.seq
	r.FullName = cleanLine(s.File) + "#" + key
	seed := fmt.Sprintf("%d\x00%s\x00%s\x00%d", a.seqIdx, r.FullName, s.StartedAt.Format(time.RFC3339Nano), r.Start)
	if r.attempt > 0 {
		// The attempts of one test case share its history id.
		seed += fmt.Sprintf("\x00attempt %d", r.attempt)
	}
	id := sha1.Sum([]byte(seed))
	r.UUID = uuidOf(id[:16])
	hist := md5.Sum([]byte(cleanLine(s.Name) + "\x00" + r.FullName))
	r.HistoryID = hex.EncodeToString(hist[:])
	r.TestCaseID = r.HistoryID
	r.Labels = []allureLabel{
		{Name: "parentSuite", Value: "hilrun"},
		{Name: "suite", Value: cleanLine(s.Name)},
		{Name: "package", Value: cleanLine(s.File)},
		{Name: "framework", Value: "hilrun"},
	}
	for _, t := range r.tags {
		r.Labels = append(r.Labels, allureLabel{Name: "tag", Value: cleanLine(t)})
	}
	if v := a.opts.Info.Version; v != "" {
		r.Parameters = append(r.Parameters, allureParameter{Name: "hilrun", Value: v})
	}
	for _, b := range a.opts.Info.Bench {
		if b.Sequence == s.Name {
			r.Parameters = append(r.Parameters, allureParameter{Name: b.Kind + " " + b.Name, Value: b.Target})
		}
	}
	for _, c := range a.consoles {
		data, cut, err := c.window(time.UnixMilli(r.Start), time.UnixMilli(r.Stop).Add(time.Millisecond))
		if err != nil || len(data) == 0 {
			continue
		}
		name := consoleLabel(c.name)
		if cut > 0 {
			name += fmt.Sprintf(" (its last %d bytes; %d before them are in %s)", len(data), cut, filepath.Base(c.path))
		}
		src := r.UUID + "-" + sanitizeName(c.name) + "-attachment.txt"
		if err := a.opts.Files.WriteFile(filepath.Join(a.dir, src), data, 0o666); err != nil {
			a.err = err
			return
		}
		r.Attachments = append(r.Attachments, allureAttach{Name: name, Source: src, Type: "text/plain"})
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		a.err = err
		return
	}
	path := filepath.Join(a.dir, r.UUID+"-result.json")
	tmp := path + ".tmp"
	if err := a.opts.Files.WriteFile(tmp, append(b, '\n'), 0o666); err != nil {
		a.err = err
		return
	}
	a.err = os.Rename(tmp, path)
}

// attachFile copies a picture into the results, named after its content's
// path, and returns the attachment.
func (a *allureWriter) attachFile(path string) (allureAttach, bool) {
	h := &htmlData{events: a.events}
	src := h.resolve(path)
	in, err := a.opts.Files.Open(src)
	if err != nil {
		return allureAttach{}, false
	}
	defer in.Close()
	sum := sha1.Sum([]byte(fmt.Sprintf("%d\x00%s\x00%s", a.seqIdx, a.seq.seq.StartedAt.Format(time.RFC3339Nano), filepath.Base(path))))
	ext := strings.ToLower(filepath.Ext(path))
	typ := map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".log": "text/plain", ".txt": "text/plain"}[ext]
	if typ == "" {
		typ = "application/octet-stream"
	}
	name := uuidOf(sum[:16]) + "-attachment" + ext
	out, err := a.opts.Files.Create(filepath.Join(a.dir, name))
	if err != nil {
		a.err = err
		return allureAttach{}, false
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		a.err = err
		return allureAttach{}, false
	}
	if err := out.Close(); err != nil {
		a.err = err
		return allureAttach{}, false
	}
	return allureAttach{Name: filepath.Base(path), Source: name, Type: typ}, true
}

// uuidOf formats 16 bytes as a UUID (version 5 bits set, as for a name
// based one), so a run's results have the same names each time.
func uuidOf(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = (u[6] & 0x0f) | 0x50
	u[8] = (u[8] & 0x3f) | 0x80
	x := hex.EncodeToString(u[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
