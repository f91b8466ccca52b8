// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

// Section is the part of a report that shows one record kind: its text
// table, as the command that measured the records prints it, and its
// charts. Results.Sections gives one per kind present, ping first; HTML and
// WritePNGs draw every section. A new record kind is a new Section here.
type Section interface {
	// Kind is the record kind the section shows (result.KindPing, ...).
	Kind() string
	// Table writes the section's text table(s).
	Table(w io.Writer) error
	// Charts returns the section's figures, each with its name.
	Charts() []Chart
	// html renders the section's part of the HTML report.
	html() (template.HTML, error)
}

var (
	_ Section = PingSection{}
	_ Section = BulkSection{}
	_ Section = FlowSection{}
)

// Chart is a figure and the name it is known by: the base name of its
// file without the extension ("go-unary-0b-closed-rpclab-go-server-latency",
// "bulk-throughput-1", "flow-rtt64ms-1MB").
type Chart struct {
	Name string
	Figure
}

// Results is every record read from results files, by kind: the ping
// records as runs, and the bulk and flow records of every file in the
// order given. Each kind present gets its Section in a report.
type Results struct {
	// Names labels each file, as Run.Name does; it titles a report
	// without ping records.
	Names []string
	Runs  []Run
	Bulk  []result.BulkRecord
	Flow  []result.FlowRecord
	Live  []result.LiveRecord
}

// Sections returns a Section per kind present: ping, then bulk, then flow.
func (r *Results) Sections() []Section {
	var out []Section
	if len(r.Runs) > 0 {
		out = append(out, PingSection{Runs: r.Runs})
	}
	if len(r.Bulk) > 0 {
		out = append(out, BulkSection{Records: r.Bulk})
	}
	if len(r.Flow) > 0 {
		out = append(out, FlowSection{Records: r.Flow})
	}
	if len(r.Live) > 0 {
		out = append(out, LiveSection{Records: r.Live})
	}
	return out
}

// htmlDoc is the page: its title, the notes at the top and each
// section's part.
type htmlDoc struct {
	Title    string
	Notes    []string
	Sections []template.HTML
}

// HTML writes one self-contained HTML report of every section of res, in
// the order Sections gives them; notes (Load's warnings) are shown at the
// top. The page loads nothing: no script, no font, no image from
// anywhere; charts are inline SVG, drawn here with gonum/plot. A report
// without records is ErrEmpty.
func HTML(w io.Writer, res *Results, notes []string) error {
	sections := res.Sections()
	if len(sections) == 0 {
		return fmt.Errorf("report: html: %w", ErrEmpty)
	}
	names := res.Names
	if len(res.Runs) > 0 {
		names = nil
		for _, run := range res.Runs {
			names = append(names, run.Name)
		}
	}
	doc := htmlDoc{Title: "rpclab report: " + strings.Join(names, " vs "), Notes: notes}
	for _, s := range sections {
		h, err := s.html()
		if err != nil {
			return err
		}
		doc.Sections = append(doc.Sections, h)
	}
	if err := tmpl.Execute(w, doc); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

// executeHTML renders the named template of the page with data, for a
// section's part of it.
func executeHTML(name string, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("report: html: %w", err)
	}
	return template.HTML(b.String()), nil
}

// WritePNGs writes every chart of every section of res as a PNG file in
// dir (created if missing), named after the chart (Chart.Name + ".png"),
// and returns the paths written.
func WritePNGs(dir string, res *Results) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: png: %w", err)
	}
	var paths []string
	for _, s := range res.Sections() {
		for _, c := range s.Charts() {
			b, err := c.PNG()
			if err != nil {
				return paths, err
			}
			p := filepath.Join(dir, c.Name+".png")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return paths, fmt.Errorf("report: png: %w", err)
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// htmlFigure is a chart as the page shows it: inline SVG under an ID
// unique in the page, with its data as a table.
type htmlFigure struct {
	Figure
	ID     string
	SVG    template.HTML
	Points int
}

// newHTMLFigure draws f as inline SVG under id.
func newHTMLFigure(f Figure, id string) (htmlFigure, error) {
	svg, err := f.SVG()
	if err != nil {
		return htmlFigure{}, err
	}
	hf := htmlFigure{Figure: f, ID: id, SVG: template.HTML(inlineSVG(svg, id+"-title"))}
	for _, s := range f.Series {
		hf.Points += len(s.Points)
	}
	return hf, nil
}

// inlineSVG drops the XML prolog of a standalone SVG and names the figure
// title that labels it, so it can sit inside HTML.
func inlineSVG(svg []byte, labelledBy string) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	// Fall back to a metric-compatible sans font where Liberation Sans is
	// not installed.
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return strings.Replace(s, "<svg ", `<svg role="img" aria-labelledby="`+template.HTMLEscapeString(labelledBy)+`" `, 1)
}

// htmlKind is the part of the page of a record kind whose table is text
// (bulk, flow): the table as the command that measured it prints it, a
// caption, and the charts.
type htmlKind struct {
	ID, Title, Caption string
	Table              string
	Figs               []htmlFigure
}

// kindHTML renders the part of the page of a section whose table is text:
// its charts get IDs "<id>-<figure kind>-<n>", n counting the section's
// charts.
func kindHTML(s Section, title, caption string) (template.HTML, error) {
	var t bytes.Buffer
	if err := s.Table(&t); err != nil {
		return "", err
	}
	k := htmlKind{ID: s.Kind(), Title: title, Caption: caption, Table: t.String()}
	for i, c := range s.Charts() {
		hf, err := newHTMLFigure(c.Figure, fmt.Sprintf("%s-%s-%d", k.ID, strings.TrimPrefix(c.Kind, k.ID+"-"), i+1))
		if err != nil {
			return "", err
		}
		k.Figs = append(k.Figs, hf)
	}
	return executeHTML("kind", k)
}
