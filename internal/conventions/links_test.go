// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// unchecked are guides left out of both checks below (none now: a guide
// whose links or dates do not pass is fixed, not listed).
var unchecked = map[string]bool{}

// pages are the Markdown files whose links are checked: the README,
// CONTRIBUTING, the experiments' index and each study's page, and every
// guide in docs/.
func pages(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(guides) < 5 {
		t.Fatalf("found %d guides in docs/, want the repository's", len(guides))
	}
	var out []string
	for _, g := range guides {
		if !unchecked[g] {
			out = append(out, g)
		}
	}
	studies, err := filepath.Glob("experiments/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{"README.md", "CONTRIBUTING.md", "experiments/README.md"}, studies...) {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		out = append(out, f)
	}
	return out
}

// mdLink is an inline Markdown link or image: [text](target) or
// ![alt](target); the target ends at the first space or ')'.
var mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)[^)]*\)`)

// inlineCode is a code span, whose brackets are not links.
var inlineCode = regexp.MustCompile("`[^`]*`")

// prose returns a page's lines outside fenced code blocks, each with its
// code spans blanked, keyed by line number (from 1).
func prose(text string) map[int]string {
	out := map[int]string{}
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") && !strings.HasPrefix(strings.TrimSpace(line), "-") {
			continue
		}
		out[i+1] = inlineCode.ReplaceAllString(line, "``")
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, every character but
// letters, digits, '-', '_' and spaces dropped, spaces turned to '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors are the anchors of a page's headings, duplicates numbered as
// GitHub numbers them (name, name-1, name-2).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestDocLinksResolve: every relative link and image in the README,
// CONTRIBUTING, the experiments' pages and the docs guides names a file or folder that exists, and
// every #anchor a heading of the page it points into.
func TestDocLinksResolve(t *testing.T) {
	texts := map[string]string{}
	read := func(p string) (string, error) {
		if s, ok := texts[p]; ok {
			return s, nil
		}
		b, err := os.ReadFile(p)
		texts[p] = string(b)
		return string(b), err
	}
	links := 0
	for _, page := range pages(t) {
		text, err := read(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range prose(text) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[2]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				file := page
				if path != "" {
					file = filepath.Join(filepath.Dir(page), path)
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s:%d: link %q: %v", page, n, target, err)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(file, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", page, n, target)
					continue
				}
				dest, err := read(file)
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", page, n, target, err)
					continue
				}
				if !anchors(dest)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, n, target, file, anchor)
				}
			}
		}
	}
	if links < 50 {
		t.Errorf("checked %d links, want the pages' (the link pattern may be broken)", links)
	}
}

// dated is a calendar date; ruleLetter a rule named by its letter ("rule
// p", "rules k to m"), the measurement diary's names for the adaptive pool's
// past rules. "rule a" is left out: it is English.
var (
	dated      = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)
	ruleLetter = regexp.MustCompile(`\b[Rr]ules? [b-z]\b`)
	history    = regexp.MustCompile(`^#+ .*\bHistory\b`)
)

// TestGuidesStateNoHistory: a guide in docs/ states what is true now; a
// date or a past rule's letter belongs in a section headed "History" (or in
// experiments/ and the commit log). Link targets, code spans and code blocks
// are not read.
func TestGuidesStateNoHistory(t *testing.T) {
	guides, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guides {
		if unchecked[g] {
			continue
		}
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		lines := prose(string(b))
		inHistory := false
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "#") {
				inHistory = history.MatchString(line)
			}
			text, ok := lines[n+1]
			if !ok || inHistory {
				continue
			}
			text = mdLink.ReplaceAllString(text, "[$1]")
			if d := dated.FindString(text); d != "" {
				t.Errorf("%s:%d: states the date %s outside a History section", g, n+1, d)
			}
			if r := ruleLetter.FindString(text); r != "" {
				t.Errorf("%s:%d: names %q outside a History section", g, n+1, r)
			}
		}
	}
}

// TestSlug: GitHub's anchors for headings with code, punctuation and
// apostrophes, as the guides link to them.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Long runs, interruptions and exit codes":                                     "long-runs-interruptions-and-exit-codes",
		"The floor: rpclab's worker beside grpc-go's client loop (`floor.sh`)":        "the-floor-rpclabs-worker-beside-grpc-gos-client-loop-floorsh",
		"A pool that sizes itself: `pool.WithAdaptive(min, max)`":                     "a-pool-that-sizes-itself-poolwithadaptivemin-max",
		"grpc-go flow control: the first ten RPCs":                                    "grpc-go-flow-control-the-first-ten-rpcs",
		"Past one machine: rpclab workers and `rpclab sweep --workers`":               "past-one-machine-rpclab-workers-and-rpclab-sweep---workers",
		"rpclab bulk: what gRPC costs when it moves bytes":                            "rpclab-bulk-what-grpc-costs-when-it-moves-bytes",
		"The open loop's floor: rpclab's open loop beside grpc-go's (`openfloor.sh`)": "the-open-loops-floor-rpclabs-open-loop-beside-grpc-gos-openfloorsh",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	a := anchors("# A\n## B\n```\n# not a heading\n```\n## B\n")
	for _, want := range []string{"a", "b", "b-1"} {
		if !a[want] {
			t.Errorf("anchors: no %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Errorf("anchors: a line in a code block read as a heading")
	}
}
