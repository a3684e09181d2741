// Package spooler queues print jobs for the copy shop's three production
// printers and hands each job to the least busy printer that can take it.
//
// A job states what it needs (paper size, duplex, colour); a printer states
// what it offers. The spooler never splits a job across printers: a customer
// expects one stack, collated, from one tray.
package spooler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// PaperSize is an ISO or US sheet format.
type PaperSize string

const (
	A4      PaperSize = "A4"
	A3      PaperSize = "A3"
	Letter  PaperSize = "Letter"
	Tabloid PaperSize = "Tabloid"
)

// Job is one customer order, already rasterised by the front desk.
type Job struct {
	ID        string
	Customer  string
	Pages     int
	Copies    int
	Paper     PaperSize
	Duplex    bool
	Colour    bool
	Rush      bool
	Submitted time.Time
}

// Sheets is the number of physical sheets the job consumes.
func (j Job) Sheets() int {
	perCopy := j.Pages
	if j.Duplex {
		perCopy = (j.Pages + 1) / 2
	}
	return perCopy * j.Copies
}

// Printer describes one device and its live state.
type Printer struct {
	Name          string
	Papers        map[PaperSize]int // sheets loaded per tray format
	Duplex        bool
	Colour        bool
	PagesPerMin   int
	queuedSheets  int
	lastHeartbeat time.Time
}

// canTake reports whether the printer could ever print the job, ignoring load.
func (p *Printer) canTake(j Job) bool {
	if j.Colour && !p.Colour {
		return false
	}
	if j.Duplex && !p.Duplex {
		return false
	}
	_, ok := p.Papers[j.Paper]
	return ok
}

// eta estimates when the printer would finish the job if it were queued now.
func (p *Printer) eta(j Job) time.Duration {
	sheets := p.queuedSheets + j.Sheets()
	minutes := float64(sheets) / float64(p.PagesPerMin)
	return time.Duration(minutes * float64(time.Minute))
}

var (
	// ErrNoPrinter means no printer supports the job's paper, colour or duplex.
	ErrNoPrinter = errors.New("spooler: no printer supports this job")
	// ErrPaperLow means a capable printer exists but none has enough paper loaded.
	ErrPaperLow = errors.New("spooler: not enough paper loaded")
)

// Assignment is the result of placing a job.
type Assignment struct {
	JobID   string
	Printer string
	ETA     time.Duration
}

// Spooler holds the printers and the waiting jobs. It is safe for concurrent use.
type Spooler struct {
	mu       sync.Mutex
	printers []*Printer
	waiting  []Job
	log      *slog.Logger
	// staleAfter marks a printer offline when its heartbeat is older than this.
	staleAfter time.Duration
	now        func() time.Time
}

// New returns a spooler for the given printers.
func New(printers []*Printer, log *slog.Logger) *Spooler {
	return &Spooler{
		printers:   printers,
		log:        log,
		staleAfter: 90 * time.Second,
		now:        time.Now,
	}
}

// Heartbeat records that a printer is alive and how many sheets it has left.
func (s *Spooler) Heartbeat(name string, remaining map[PaperSize]int, queued int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.printers {
		if p.Name == name {
			p.Papers = remaining
			p.queuedSheets = queued
			p.lastHeartbeat = s.now()
			return nil
		}
	}
	return fmt.Errorf("spooler: unknown printer %q", name)
}

// Submit places a job at once if it can, and otherwise keeps it waiting.
// Rush jobs jump ahead of everything that is not itself a rush job.
func (s *Spooler) Submit(ctx context.Context, j Job) (*Assignment, error) {
	if j.Pages <= 0 || j.Copies <= 0 {
		return nil, fmt.Errorf("spooler: job %s has %d pages x %d copies", j.ID, j.Pages, j.Copies)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	a, err := s.place(j)
	switch {
	case err == nil:
		s.log.InfoContext(ctx, "job placed", "job", j.ID, "printer", a.Printer, "eta", a.ETA.Round(time.Second))
		return a, nil
	case errors.Is(err, ErrPaperLow):
		s.enqueue(j)
		s.log.WarnContext(ctx, "job waiting for paper", "job", j.ID, "paper", j.Paper, "sheets", j.Sheets())
		return nil, nil
	default:
		return nil, err
	}
}

// place picks the printer with the earliest finish time among those that are
// online, capable and loaded. Ties go to the printer with more paper left,
// so that one printer is not drained while another sits full.
func (s *Spooler) place(j Job) (*Assignment, error) {
	var capable, loaded []*Printer
	cutoff := s.now().Add(-s.staleAfter)
	for _, p := range s.printers {
		if p.lastHeartbeat.Before(cutoff) || !p.canTake(j) {
			continue
		}
		capable = append(capable, p)
		if p.Papers[j.Paper] >= j.Sheets() {
			loaded = append(loaded, p)
		}
	}
	if len(capable) == 0 {
		return nil, ErrNoPrinter
	}
	if len(loaded) == 0 {
		return nil, ErrPaperLow
	}
	sort.Slice(loaded, func(a, b int) bool {
		ea, eb := loaded[a].eta(j), loaded[b].eta(j)
		if ea != eb {
			return ea < eb
		}
		return loaded[a].Papers[j.Paper] > loaded[b].Papers[j.Paper]
	})
	best := loaded[0]
	eta := best.eta(j)
	best.queuedSheets += j.Sheets()
	best.Papers[j.Paper] -= j.Sheets()
	return &Assignment{JobID: j.ID, Printer: best.Name, ETA: eta}, nil
}

// enqueue inserts a job keeping rush jobs first, then submission order.
func (s *Spooler) enqueue(j Job) {
	i := sort.Search(len(s.waiting), func(i int) bool {
		w := s.waiting[i]
		if w.Rush != j.Rush {
			return !w.Rush
		}
		return w.Submitted.After(j.Submitted)
	})
	s.waiting = append(s.waiting, Job{})
	copy(s.waiting[i+1:], s.waiting[i:])
	s.waiting[i] = j
}

// Drain retries every waiting job, for example after a tray was refilled.
// Jobs that still cannot be placed stay in the queue in their order.
func (s *Spooler) Drain(ctx context.Context) []Assignment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var placed []Assignment
	kept := s.waiting[:0]
	for _, j := range s.waiting {
		a, err := s.place(j)
		if err != nil {
			kept = append(kept, j)
			continue
		}
		placed = append(placed, *a)
	}
	s.waiting = kept
	if len(placed) > 0 {
		s.log.InfoContext(ctx, "drained waiting jobs", "placed", len(placed), "still_waiting", len(kept))
	}
	return placed
}

// Waiting returns a copy of the queue, for the front-desk screen.
func (s *Spooler) Waiting() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Job, len(s.waiting))
	copy(out, s.waiting)
	return out
}

// RunDrainLoop drains the queue every interval until ctx is cancelled.
func (s *Spooler) RunDrainLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Drain(ctx)
		}
	}
}
