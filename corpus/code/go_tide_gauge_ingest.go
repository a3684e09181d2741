// Package tidegauge receives water-level readings from harbour tide gauges,
// smooths them, and flags surges that exceed the configured threshold.
//
// Gauges post batches over HTTP every few minutes. A batch may arrive twice
// (the gauges retry on any non-2xx answer), so readings are deduplicated by
// (station, sampled_at) before they reach the smoother.
package tidegauge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Reading is one water-level sample, in millimetres above chart datum.
type Reading struct {
	Station   string    `json:"station"`
	SampledAt time.Time `json:"sampled_at"`
	LevelMM   int32     `json:"level_mm"`
	Quality   uint8     `json:"quality"` // 0 = good, 1 = suspect, 2 = bad
}

// Batch is the body a gauge posts to /v1/readings.
type Batch struct {
	Firmware string    `json:"firmware"`
	Readings []Reading `json:"readings"`
}

// Surge is emitted when the smoothed level departs from the predicted
// astronomical tide by more than Config.SurgeThresholdMM.
type Surge struct {
	Station    string
	At         time.Time
	ObservedMM float64
	ExpectedMM float64
}

func (s Surge) DeltaMM() float64 { return s.ObservedMM - s.ExpectedMM }

// Predictor returns the astronomical tide for a station at a given time.
type Predictor interface {
	Predict(station string, at time.Time) (float64, error)
}

type Config struct {
	WindowSize       int           // samples in the moving median
	SurgeThresholdMM float64       // absolute deviation that raises a surge
	MaxBatch         int           // readings accepted per request
	MaxSkew          time.Duration // how far in the future a sample may be
}

var DefaultConfig = Config{
	WindowSize:       7,
	SurgeThresholdMM: 350,
	MaxBatch:         2048,
	MaxSkew:          90 * time.Second,
}

var (
	ErrEmptyBatch   = errors.New("batch has no readings")
	ErrBatchTooBig  = errors.New("batch exceeds the size limit")
	ErrFutureSample = errors.New("sample timestamp is in the future")
)

type seenKey struct {
	station string
	unix    int64
}

// Ingestor is safe for concurrent use by many HTTP handlers.
type Ingestor struct {
	cfg       Config
	predictor Predictor
	surges    chan<- Surge
	log       *slog.Logger
	now       func() time.Time

	mu      sync.Mutex
	seen    map[seenKey]struct{}
	windows map[string][]float64
}

func NewIngestor(cfg Config, p Predictor, surges chan<- Surge, log *slog.Logger) *Ingestor {
	return &Ingestor{
		cfg:       cfg,
		predictor: p,
		surges:    surges,
		log:       log,
		now:       time.Now,
		seen:      make(map[seenKey]struct{}, 1<<14),
		windows:   make(map[string][]float64),
	}
}

// Accept validates a batch and feeds the new readings through the smoother.
// It returns how many readings were new.
func (in *Ingestor) Accept(ctx context.Context, b Batch) (int, error) {
	switch {
	case len(b.Readings) == 0:
		return 0, ErrEmptyBatch
	case len(b.Readings) > in.cfg.MaxBatch:
		return 0, fmt.Errorf("%w: %d > %d", ErrBatchTooBig, len(b.Readings), in.cfg.MaxBatch)
	}

	limit := in.now().Add(in.cfg.MaxSkew)
	for i, r := range b.Readings {
		if r.SampledAt.After(limit) {
			return 0, fmt.Errorf("reading %d from %s: %w", i, r.Station, ErrFutureSample)
		}
	}

	sorted := make([]Reading, len(b.Readings))
	copy(sorted, b.Readings)
	sort.Slice(sorted, func(i, j int) bool {
		return sorted[i].SampledAt.Before(sorted[j].SampledAt)
	})

	fresh := 0
	for _, r := range sorted {
		if err := ctx.Err(); err != nil {
			return fresh, err
		}
		if r.Quality >= 2 {
			continue
		}
		if !in.markSeen(r) {
			continue
		}
		fresh++
		smoothed, ok := in.push(r.Station, float64(r.LevelMM))
		if !ok {
			continue
		}
		in.checkSurge(r.Station, r.SampledAt, smoothed)
	}
	return fresh, nil
}

func (in *Ingestor) markSeen(r Reading) bool {
	k := seenKey{station: r.Station, unix: r.SampledAt.Unix()}
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, dup := in.seen[k]; dup {
		return false
	}
	in.seen[k] = struct{}{}
	return true
}

// push appends a level to the station's window and returns the median once
// the window is full.
func (in *Ingestor) push(station string, level float64) (float64, bool) {
	in.mu.Lock()
	w := append(in.windows[station], level)
	if len(w) > in.cfg.WindowSize {
		w = w[len(w)-in.cfg.WindowSize:]
	}
	in.windows[station] = w
	full := len(w) == in.cfg.WindowSize
	snapshot := append([]float64(nil), w...)
	in.mu.Unlock()

	if !full {
		return 0, false
	}
	return median(snapshot), true
}

func (in *Ingestor) checkSurge(station string, at time.Time, observed float64) {
	expected, err := in.predictor.Predict(station, at)
	if err != nil {
		in.log.Warn("no prediction", "station", station, "at", at, "err", err)
		return
	}
	if math.Abs(observed-expected) < in.cfg.SurgeThresholdMM {
		return
	}
	s := Surge{Station: station, At: at, ObservedMM: observed, ExpectedMM: expected}
	select {
	case in.surges <- s:
	default:
		in.log.Error("surge channel full, dropping", "station", station, "delta_mm", s.DeltaMM())
	}
}

// Forget drops dedup keys older than the cutoff; call it from a ticker.
func (in *Ingestor) Forget(cutoff time.Time) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	dropped := 0
	for k := range in.seen {
		if k.unix < cutoff.Unix() {
			delete(in.seen, k)
			dropped++
		}
	}
	return dropped
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// ServeHTTP implements POST /v1/readings.
func (in *Ingestor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
	var b Batch
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
		return
	}

	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()

	n, err := in.Accept(ctx, b)
	switch {
	case errors.Is(err, ErrEmptyBatch), errors.Is(err, ErrFutureSample):
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	case errors.Is(err, ErrBatchTooBig):
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		in.log.Error("accept failed", "err", err, "firmware", b.Firmware)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}

	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int{
		"accepted":   n,
		"duplicates": len(b.Readings) - n,
	})
}
