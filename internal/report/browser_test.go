// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/rpclab/rpclab/internal/testutil"
)

// findChromium returns Debian's chromium (or $RPCLAB_CHROMIUM). Without one
// the test skips, unless RPCLAB_REQUIRE_BROWSER=1 (as in CI), when it fails.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RPCLAB_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH (install it with: apt-get install -y chromium fonts-liberation; or set RPCLAB_CHROMIUM)"
	if os.Getenv("RPCLAB_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + "; RPCLAB_REQUIRE_BROWSER=1 makes this a failure")
	}
	t.Skip(msg + "; skipping the browser test")
	return ""
}

// artifactDir is where the test keeps its screenshot: $RPCLAB_ARTIFACT_DIR,
// else a folder under the system's temporary directory.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RPCLAB_ARTIFACT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "rpclab-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browserView is what a page showed in the browser.
type browserView struct {
	// problems are console errors and warnings, uncaught exceptions and
	// browser log errors; requests are every URL the page asked for.
	problems, requests    []string
	charts, sized, tables int
	shot                  []byte // full-page PNG
}

// openInBrowser writes page to a file, opens it in a fresh headless
// Chromium (own profile, background networking off) and reports what
// happened.
func openInBrowser(t *testing.T, exe string, page []byte) (browserView, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: path}).String()

	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()

	var (
		mu sync.Mutex
		v  browserView
	)
	// The listener sees every event from the tab's start, so nothing the
	// page logs or fetches while loading is missed.
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				v.problems = append(v.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			v.problems = append(v.problems, fmt.Sprintf("exception: %s at %s:%d", e.ExceptionDetails.Text, e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber))
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				v.problems = append(v.problems, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			if e.Request.URL != pageURL {
				v.requests = append(v.requests, e.Request.URL)
			}
		}
	}
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer bcancel()

	if err := chromedp.Do(bctx,
		chromedp.Navigate(pageURL),
		chromedp.WaitReady(chromedp.CSS("footer")),
		// Let late requests (fonts, icons) show up before counting them.
		chromedp.Sleep(300*time.Millisecond),
	); err != nil {
		t.Fatalf("open the page in chromium: %v", err)
	}
	count := func(js string) int {
		n, err := chromedp.Run(bctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return n
	}
	charts := count(`document.querySelectorAll("figure.chart svg").length`)
	sized := count(`[...document.querySelectorAll("figure.chart svg")].filter(s => { const r = s.getBoundingClientRect(); return r.width > 300 && r.height > 100 }).length`)
	tables := count(`document.querySelectorAll("table.records").length`)
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	v.charts, v.sized, v.tables, v.shot = charts, sized, tables, shot
	return v, pageURL
}

// TestReportInBrowser opens an overlay report in headless Chromium and checks
// that it renders every chart with no console error and no network request,
// then keeps a full-page screenshot.
func TestReportInBrowser(t *testing.T) {
	exe := findChromium(t)
	runs := fixture(t, "shared-bottleneck.jsonl", "healthy.jsonl")
	var b bytes.Buffer
	if err := HTML(&b, &Results{Runs: runs}, []string{"fixture records, not a measurement"}); err != nil {
		t.Fatal(err)
	}
	v, _ := openInBrowser(t, exe, b.Bytes())

	shotPath := filepath.Join(artifactDir(t), "report-screenshot.png")
	if err := os.WriteFile(shotPath, v.shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot kept at %s (%d bytes)", shotPath, len(v.shot))

	if want := len(FigureKinds); v.charts != want || v.sized != want {
		t.Errorf("got %d charts, %d of them drawn at a visible size; want %d", v.charts, v.sized, want)
	}
	if v.tables != 1 {
		t.Errorf("got %d record tables, want 1", v.tables)
	}
	for _, p := range v.problems {
		t.Errorf("browser reported: %s", p)
	}
	for _, r := range v.requests {
		if !strings.HasPrefix(r, "data:") {
			t.Errorf("the page requested %s; want no request but the page itself", r)
		}
	}
}

// TestBrowserCatchesProblems is the control: a page that logs an error,
// throws, and fetches from the network must be caught by the same harness.
func TestBrowserCatchesProblems(t *testing.T) {
	exe := findChromium(t)
	page := `<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>
<img src="http://127.0.0.1:9/missing.png">
<script>console.error("planted error"); setTimeout(() => { throw new Error("planted exception") }, 0);</script>
<footer></footer></body></html>`
	v, _ := openInBrowser(t, exe, []byte(page))
	joined := strings.Join(v.problems, "\n")
	for _, want := range []string{"planted error", "Uncaught"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q: want one containing %q", v.problems, want)
		}
	}
	if len(v.requests) == 0 || v.requests[0] != "http://127.0.0.1:9/missing.png" {
		t.Errorf("got requests %q, want the planted image", v.requests)
	}
}

// TestCompareReportInBrowser: a report of two client languages, with its
// cross-client section and connection notes, loads as cleanly.
func TestCompareReportInBrowser(t *testing.T) {
	exe := findChromium(t)
	var b bytes.Buffer
	if err := HTML(&b, &Results{Runs: []Run{{Name: "compare", Records: twoClients(t)}}}, nil); err != nil {
		t.Fatal(err)
	}
	v, _ := openInBrowser(t, exe, b.Bytes())
	if err := os.WriteFile(filepath.Join(artifactDir(t), "compare-report-screenshot.png"), v.shot, 0o644); err != nil {
		t.Fatal(err)
	}
	// Three cross-client charts, then four per language.
	if want := 3 + 2*len(FigureKinds); v.charts != want || v.sized != want {
		t.Errorf("got %d charts, %d of them drawn at a visible size; want %d", v.charts, v.sized, want)
	}
	for _, p := range v.problems {
		t.Errorf("browser reported: %s", p)
	}
	for _, r := range v.requests {
		if !strings.HasPrefix(r, "data:") {
			t.Errorf("the page requested %s; want no request but the page itself", r)
		}
	}
}
