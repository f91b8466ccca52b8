// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart size. The HTML scales the SVG to its column; PNGs are drawn at
// PNGDPI, so a chart is 1500 × 750 pixels.
const (
	ChartWidth  = 10 * vg.Inch
	ChartHeight = 5 * vg.Inch
	PNGDPI      = 150
)

var grey = color.Gray{Y: 110}

// sansFont is Liberation Sans, which gonum/plot ships; PNGs need no system
// fonts, and SVG text names "Liberation Sans" with the browser's fallback.
func sansFont(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// newPlot builds the gonum plot of f and a legend drawn beside it (not
// over the lines).
func newPlot(f *Figure) (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.Title.TextStyle.Font = sansFont(15)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = f.XLabel, f.YLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sansFont(13)
		a.Tick.Label.Font = sansFont(12)
	}
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.TextStyle.Font = sansFont(12)
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = vg.Points(26)
	leg.Padding = vg.Points(3)

	e, err := addSeries(p, &leg, f)
	if err != nil {
		return nil, nil, err
	}
	setAxes(p, f, e)
	return p, &leg, nil
}

// setAxes scales p's axes to the extent of f's points: a log X axis when
// X spans a factor of four or more, a log Y axis for LogY figures, else Y
// from zero.
func setAxes(p *plot.Plot, f *Figure, e extent) {
	if len(e.xs) > 0 && e.xs[0] > 0 && e.xs[len(e.xs)-1]/e.xs[0] >= 4 {
		p.X.Scale = plot.LogScale{}
		p.X.Min, p.X.Max = e.xs[0]/1.15, e.xs[len(e.xs)-1]*1.15
	}
	p.X.Tick.Marker = inflightTicks(e.xs)
	switch {
	case len(e.xs) == 0:
		// No data: an empty frame with its title.
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 1, 2, 1, 2
	case f.LogY:
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = e.ymin/1.3, e.ymax*1.3
	default:
		p.Y.Min = 0
		p.Y.Max = e.ymax * 1.08
		p.Y.Tick.Marker = siTicks{}
		// Keep the measured lines readable: the ideal line may leave the
		// frame where it outruns them.
		if e.measuredMax > 0 && e.ymax > 1.6*e.measuredMax {
			p.Y.Max = 1.6 * e.measuredMax
		}
		if e.ymax <= 0 {
			p.Y.Max = 1
		}
	}
}

// extent is where a figure's points lie: the X values measured (sorted,
// each once), the Y range, and the highest Y of a measured series (ideal
// lines aside).
type extent struct {
	xs                      []float64
	ymin, ymax, measuredMax float64
}

// addSeries adds f's series to p and its legend, and returns their extent.
func addSeries(p *plot.Plot, leg *plot.Legend, f *Figure) (extent, error) {
	e := extent{ymin: math.Inf(1), ymax: math.Inf(-1)}
	seenX := map[float64]bool{}
	for _, s := range f.Series {
		if len(s.Points) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(s.Points))
		for i, pt := range s.Points {
			xys[i].X, xys[i].Y = pt.X, pt.Y
			if !seenX[pt.X] {
				seenX[pt.X] = true
				e.xs = append(e.xs, pt.X)
			}
			e.ymin, e.ymax = math.Min(e.ymin, pt.Y), math.Max(e.ymax, pt.Y)
			if s.Color >= 0 {
				e.measuredMax = math.Max(e.measuredMax, pt.Y)
			}
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return e, fmt.Errorf("report: chart %q, series %q: %w", f.Title, s.Label, err)
		}
		clr := color.Color(grey)
		if s.Color >= 0 {
			clr = plotutil.Color(s.Color)
		}
		l.Color = clr
		l.Width = vg.Points(2)
		if s.Dash > 0 {
			l.Dashes = []vg.Length{vg.Points(6 / float64(s.Dash)), vg.Points(3)}
		}
		if s.Shape < 0 {
			p.Add(l)
			leg.Add(s.Label, l)
			continue
		}
		sc.Color = clr
		sc.Shape = plotutil.Shape(s.Shape)
		sc.Radius = vg.Points(3)
		p.Add(l, sc)
		leg.Add(s.Label, l, sc)
	}
	sort.Float64s(e.xs)
	return e, nil
}

// inflightTicks labels the measured in-flight counts (at most about ten):
// every step-th one and the last, leaving out the labelled one before the
// last when it is closer than a step (1..21 ends 16, 21, not 16, 19, 21).
func inflightTicks(xs []float64) plot.Ticker {
	if len(xs) == 0 {
		return plot.DefaultTicks{}
	}
	step := (len(xs) + 9) / 10
	last := len(xs) - 1
	var ts plot.ConstantTicks
	for i, x := range xs {
		t := plot.Tick{Value: x}
		if i == last || (i%step == 0 && last-i >= step) {
			t.Label = strconv.FormatFloat(x, 'f', -1, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// siTicks are gonum's default ticks labelled with SI suffixes (20k, 1.5M).
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = si(ts[i].Value)
		}
	}
	return ts
}

func si(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// logTicks label 1, 2 and 5 times each power of ten, with minor ticks
// between, so a log axis spanning less than a decade still reads.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		p := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * p
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = si(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// draw renders f on c: the plot on the left, its legend on the right.
func drawFigure(f *Figure, c draw.Canvas) error {
	p, leg, err := newPlot(f)
	if err != nil {
		return err
	}
	lw := leg.Rectangle(c).Size().X + vg.Points(16)
	p.Draw(draw.Crop(c, 0, -lw, 0, 0))
	top := p.Title.TextStyle.Height(p.Title.Text) + 2*p.Title.Padding
	leg.Draw(draw.Crop(c, c.Max.X-c.Min.X-lw+vg.Points(8), 0, 0, -top))
	return nil
}

// SVG renders f as a standalone SVG document.
func (f *Figure) SVG() ([]byte, error) {
	cv := vgsvg.New(ChartWidth, ChartHeight)
	cv.SetColor(color.White)
	cv.Fill(rectPath(ChartWidth, ChartHeight))
	if err := drawFigure(f, draw.New(cv)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: svg: %w", err)
	}
	return b.Bytes(), nil
}

// PNG renders f as a PNG image at PNGDPI.
func (f *Figure) PNG() ([]byte, error) {
	cv := vgimg.NewWith(vgimg.UseWH(ChartWidth, ChartHeight), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
	if err := drawFigure(f, draw.New(cv)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: png: %w", err)
	}
	return b.Bytes(), nil
}

func rectPath(w, h vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{})
	p.Line(vg.Point{X: w})
	p.Line(vg.Point{X: w, Y: h})
	p.Line(vg.Point{Y: h})
	p.Close()
	return p
}
