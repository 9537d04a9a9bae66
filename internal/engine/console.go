package engine

import (
	"context"

	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// SerialConfig is the one conversion of a device into a serial port
// configuration, for hilrun run, repl and mcp alike: its port, line
// settings, the modem lines it declares (lines it does not declare are
// left as the port has them: asserting DTR on open resets some boards),
// reconnection, buffer size, and for a device given by USB identity how
// to find it, then and after every re-enumeration, and the gates' device
// and dial policies it opens through. The caller adds where logs go.
func SerialConfig(dev *steps.Device, gates gate.Policy) serialx.Config {
	cfg := serialx.Config{
		Devices: gates.Devices, Dial: gates.Dial,
		Path: dev.Port, Baud: dev.Baud, DataBits: dev.DataBits, Parity: dev.Parity,
		StopBits: dev.StopBits, FlowControl: dev.FlowControl, DTR: dev.DTR, RTS: dev.RTS,
		Reconnect: dev.Reconnect, BufferSize: dev.Buffer,
	}
	if dev.USB != nil {
		u := *dev.USB
		cfg.Resolve = func(ctx context.Context) (string, error) { return serialx.FindUSB(u.VID, u.PID, u.Serial) }
	}
	return cfg
}

// ConsoleOptions are what the command opening consoles decides for them.
type ConsoleOptions struct {
	// LogDir receives each console's raw and timeline logs; "" keeps none.
	LogDir string
	// Warn receives warnings, such as a lock folder hilrun cannot write;
	// nil drops them.
	Warn func(msg string)
	// Gates are the policies consoles open through (Devices, Dial).
	Gates gate.Policy
	// Secrets are masked in everything the consoles receive and log.
	Secrets *redact.Set
}

// OpenConsole opens devices as serial consoles. A device given by USB
// identity is found by it, then and after every re-enumeration; the
// runner may release a console's port for an upload and take it back.
func OpenConsole(o ConsoleOptions) runner.Opener {
	return func(ctx context.Context, dev *steps.Device) (runner.Console, error) {
		cfg := SerialConfig(dev, o.Gates)
		cfg.LogDir, cfg.Warn = o.LogDir, o.Warn
		cfg.Secrets, cfg.SecretFlush = o.Secrets, SecretFlush(dev)
		if cfg.Path == "" && cfg.Resolve != nil {
			p, err := cfg.Resolve(ctx)
			if err != nil {
				return nil, err
			}
			cfg.Path = p
		}
		c, err := serialx.Open(ctx, dev.Name, cfg)
		if err != nil {
			return nil, err
		}
		return &handoverConsole{Console: c, resolve: cfg.Resolve}, nil
	}
}

// handoverConsole lets the runner release a console's port for an upload
// and take it back, following a USB device that re-enumerates.
type handoverConsole struct {
	*serialx.Console
	resolve func(ctx context.Context) (string, error)
}

// OpenedAt is 0: OpenConsole opens a console for one run, which sees all
// it received (see runner.OpenedConsole).
func (c *handoverConsole) OpenedAt() int64 { return 0 }

func (c *handoverConsole) Reacquire(ctx context.Context) error {
	return c.Console.Reacquire(ctx, serialx.ReacquireOptions{Resolve: c.resolve})
}

// LogPath is the raw log file of console c, or "" when it keeps none.
func LogPath(c runner.Console) string {
	if lc, ok := c.(interface{ LogPaths() (string, string) }); ok {
		raw, _ := lc.LogPaths()
		return raw
	}
	return ""
}
