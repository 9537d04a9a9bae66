package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// buildDir is the folder of a run's build and upload logs.
const buildDir = "build"

// builder runs the tools of build and upload steps, writing each tool's
// whole output to logFile(step) and passing every line to line as well as
// to the runner.
func (s *Server) builder(logFile func(*steps.Step) string, line func(string)) func(runner.Builder) runner.Builder {
	return func(next runner.Builder) runner.Builder {
		if next == nil {
			return nil
		}
		return func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
			req.Log = logFile(req.Step)
			if progress := req.Progress; progress != nil {
				req.Progress = func(l string) { progress(l); line(l) }
			} else {
				req.Progress = line
			}
			return next(ctx, req)
		}
	}
}

// checkBuild applies the policy to a build or upload step and resolves its
// folders and files to real paths under a root. Builds run programs, so
// over MCP they run only inside the --root folders, never through a shell.
func (s *Server) checkBuild(seq *steps.Sequence, st *steps.Step) error {
	p := &s.cfg.Policy
	b := st.Build
	if b.Shell {
		return refused("%s: shell: true is not run over MCP; give command as an argument vector", st.Kind)
	}
	base := s.baseDir(seq)
	switch {
	case b.Image != nil:
		real, err := p.resolveIn("upload file "+b.Image.File, b.Image.File, base)
		if err != nil {
			return err
		}
		setPath(&b.Image.File, real)
	case b.PIO != nil:
		dir, err := p.ResolveDir("pio.project_dir", b.PIO.ProjectDir, base)
		if err != nil {
			return err
		}
		// A folder without platformio.ini, or an environment it lacks, is
		// refused before PlatformIO runs.
		if err := pio.CheckProject(dir, b.PIO.Env); err != nil {
			return fmt.Errorf("%s: %w", st.Kind, err)
		}
		setPath(&b.PIO.ProjectDir, dir)
	default:
		dir, err := p.ResolveDir("dir", b.Dir, base)
		if err != nil {
			return err
		}
		setPath(&b.Dir, dir)
		if b.ELF != "" {
			elf := b.ELF
			if !filepath.IsAbs(elf) {
				elf = filepath.Join(dir, elf)
			}
			if err := p.CheckOutput("elf", elf); err != nil {
				return err
			}
		}
	}
	if b.Port != "" && seq.Device(b.Port) == nil {
		if err := s.checkPort(b.Port); err != nil {
			return err
		}
	}
	return nil
}

// uploadPortDevices makes the open connection behind an upload's port path
// a device of seq, so that the runner releases its console for the upload.
func (s *Server) uploadPortDevices(seq *steps.Sequence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	steps.Walk(seq, func(st *steps.Step) {
		if (st.Kind != steps.KindUpload && st.Kind != steps.KindPIOTest) || st.Build == nil || st.Build.Port == "" || seq.Device(st.Build.Port) != nil {
			return
		}
		c := s.findConnLocked(st.Build.Port)
		if c == nil {
			return
		}
		for _, d := range seq.Devices {
			if d.Port == c.port && s.findConnLocked(d.Name) == c {
				st.Build.Port = d.Name
				return
			}
		}
		name := c.id
		for seq.Device(name) != nil {
			name += "_upload"
		}
		seq.Devices = append(seq.Devices, &steps.Device{Name: name, Port: c.port, LineEnding: c.lineEnding, Pos: st.Pos})
		st.Build.Port = name
	})
}

// uploadPortKeys are the locks of upload ports that are paths rather than
// devices: nothing else may use the port while an uploader has it.
func (s *Server) uploadPortKeys(seq *steps.Sequence) []string {
	var keys []string
	steps.Walk(seq, func(st *steps.Step) {
		if (st.Kind == steps.KindUpload || st.Kind == steps.KindPIOTest) && st.Build != nil && st.Build.Port != "" && seq.Device(st.Build.Port) == nil {
			keys = append(keys, portKey(realPort(st.Build.Port)))
		}
	})
	return keys
}
