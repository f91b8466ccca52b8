// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	_ "embed"
	"html/template"
	"strconv"

	"github.com/rpclab/rpclab/internal/verdict"
)

// htmlTemplate is the page: the top, each section's part ("ping" and
// "kind" define them) and the footer.
//
//go:embed report.html.tmpl
var htmlTemplate string

var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"f0":      func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) },
	"f1":      func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"f2":      func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"us":      us,
	"conn":    verdict.ConnLabel,
	"errs":    errorsText,
	"pct":     func(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) },
	"point":   func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
	"cpu":     func(ns float64) float64 { return ns / 1e3 },
	"bratio":  func() float64 { return verdict.BottleneckRatio },
	"flat":    func() float64 { return 100 * verdict.FlatEfficiency },
	"scaling": func() float64 { return 100 * verdict.ScalingEfficiency },
	"busy":    func() float64 { return 100 * verdict.ClientCPUBusy },
	"optInt":  optInt,
}).Parse(htmlTemplate))
