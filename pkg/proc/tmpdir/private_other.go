//go:build !unix

package tmpdir

import "io/fs"

// noFollow is not needed where lock files are not used (bench pools
// refuse to start there).
const noFollow = 0

// unsafeFolder checks what can be checked without Unix owners and modes.
func unsafeFolder(fi fs.FileInfo) string {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "it is a link"
	case !fi.IsDir():
		return "it is not a folder"
	}
	return ""
}
