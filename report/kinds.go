// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
)

// htmlKinds builds the sections of the bulk and flow records of res.
func htmlKinds(res *Results) ([]htmlKind, error) {
	var out []htmlKind
	if len(res.Bulk) > 0 {
		var t bytes.Buffer
		if err := BulkTable(&t, res.Bulk); err != nil {
			return nil, err
		}
		k := htmlKind{ID: "bulk", Title: fmt.Sprintf("Bulk transfer (rpclab bulk): %d records", len(res.Bulk)), Table: t.String(),
			Caption: "One row per step; x tcp compares throughput and CPU per GiB with the tcp step of the same target, size, chunk and streams (docs/bulk.md)."}
		figs, err := kindFigures("bulk", BulkFigures(res.Bulk))
		if err != nil {
			return nil, err
		}
		k.Figs = figs
		out = append(out, k)
	}
	if len(res.Flow) > 0 {
		var t bytes.Buffer
		if err := FlowTable(&t, res.Flow); err != nil {
			return nil, err
		}
		k := htmlKind{ID: "flow", Title: fmt.Sprintf("Large messages and flow-control windows (rpclab flow): %d records", len(res.Flow)), Table: t.String(),
			Caption: "One row per cell: transport, payload and emulated RTT (docs/flow.md)."}
		var figs []Figure
		for _, c := range FlowCharts(res.Flow) {
			figs = append(figs, c.Figure)
		}
		hf, err := kindFigures("flow", figs)
		if err != nil {
			return nil, err
		}
		k.Figs = hf
		out = append(out, k)
	}
	return out, nil
}

// kindFigures draws figures as inline SVG, with IDs unique in the page.
func kindFigures(prefix string, figs []Figure) ([]htmlFigure, error) {
	out := make([]htmlFigure, 0, len(figs))
	for i, f := range figs {
		svg, err := f.SVG()
		if err != nil {
			return nil, err
		}
		id := fmt.Sprintf("%s-%s-%d", prefix, strings.TrimPrefix(f.Kind, prefix+"-"), i+1)
		hf := htmlFigure{Figure: f, ID: id, SVG: template.HTML(inlineSVG(svg, id+"-title"))}
		for _, s := range f.Series {
			hf.Points += len(s.Points)
		}
		out = append(out, hf)
	}
	return out, nil
}

// WriteKindPNGs writes the charts of the bulk and flow records of res as
// PNG files in dir (created if missing) and returns the paths written:
// bulk-<figure>-<n>.png and flow's flow-rtt<RTT>-<payload>.png.
func WriteKindPNGs(dir string, res *Results) ([]string, error) {
	if len(res.Bulk) == 0 && len(res.Flow) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: png: %w", err)
	}
	type named struct {
		name string
		fig  Figure
	}
	var all []named
	n := map[string]int{}
	for _, f := range BulkFigures(res.Bulk) {
		n[f.Kind]++
		all = append(all, named{fmt.Sprintf("%s-%d.png", f.Kind, n[f.Kind]), f})
	}
	for _, c := range FlowCharts(res.Flow) {
		all = append(all, named{c.Name, c.Figure})
	}
	var paths []string
	for _, f := range all {
		b, err := f.fig.PNG()
		if err != nil {
			return paths, err
		}
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return paths, fmt.Errorf("report: png: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
