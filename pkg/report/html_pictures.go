package report

import (
	"os"
	"path/filepath"
)

// renameFrames replaces the frame paths of expect_image checks by the
// numbers of the embedded pictures.
func (d *htmlData) renameFrames(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			out[i] = c
			continue
		}
		m = maps(m)
		if f, ok := m["frame"].(string); ok {
			m["frame"] = filepath.Base(f)
			if n := d.picture(f); n >= 0 {
				m["picture"] = n
			}
		}
		out[i] = m
	}
	return out
}

// picture returns the number of the embedded picture at path, adding it
// when the bounds allow; -1 when it is not embedded.
func (d *htmlData) picture(path string) int {
	if i, ok := d.pictureIdx[path]; ok {
		return i
	}
	if len(d.pictures) >= htmlPictures {
		return -1
	}
	p := d.resolve(path)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > htmlPictureMax || d.pictureSum+fi.Size() > htmlPictureBytes {
		return -1
	}
	d.pictureSum += fi.Size()
	if d.pictureIdx == nil {
		d.pictureIdx = map[string]int{}
	}
	d.pictureIdx[path] = len(d.pictures)
	d.pictures = append(d.pictures, p)
	return len(d.pictures) - 1
}

// resolve finds a file the run named (a console log, a picture) when the
// log folder has moved since: beside the event file, in the folder of the
// same name.
func (d *htmlData) resolve(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path
	}
	alt := filepath.Join(filepath.Dir(d.events), filepath.Base(filepath.Dir(path)), filepath.Base(path))
	if _, err := os.Stat(alt); err == nil {
		return alt
	}
	return path
}
