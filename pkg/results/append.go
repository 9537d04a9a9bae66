package results

import "fmt"

// Append copies the records of another run's event file (a sequence run
// on a bench of a pool, recorded on its own so that sequences running at
// the same time do not interleave) to the end of s, numbering its
// sequences after those s holds, and naming bench as the bench that ran
// them ("" leaves them as they are). Call it from one goroutine at a time
// per stream, after the other file's stream is closed.
func (s *Stream) Append(path, bench string) error {
	return Read(path, func(r *Record) error {
		if r.Sequence != nil && bench != "" {
			r.Sequence.Bench = bench
		}
		s.add(*r)
		if err := s.Err(); err != nil {
			return fmt.Errorf("append %s to the event stream: %w", path, err)
		}
		return nil
	})
}
