// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/usage"
)

// labClient is one client a lab runs: the in-process Go client (ext nil)
// or another language's, with the layouts it sweeps.
type labClient struct {
	lang  string
	ext   *extclient.External
	conns []string
	// goConns are conns parsed for the Go client of rpclab compare (nil
	// otherwise: a plain sweep's spec carries its own).
	goConns []loadgen.ConnMode
}

// planClients resolves the clients of a run: sf.client, or with rpclab
// compare every one of sf.clients, each with the --conn layouts its stack
// has (a layout no client has is a usage error). It builds nothing.
func planClients(sf *sweepFlags, stderr io.Writer) ([]labClient, error) {
	if len(sf.clients) == 0 {
		return []labClient{{lang: sf.client, conns: sf.conns}}, nil
	}
	var out []labClient
	used := map[string]bool{}
	for _, lang := range sf.clients {
		c := labClient{lang: lang}
		for _, conn := range sf.conns {
			if extclient.HasLayout(lang, conn) {
				c.conns = append(c.conns, conn)
				used[conn] = true
			}
		}
		if len(c.conns) == 0 {
			fmt.Fprintf(stderr, "rpclab: skipping the %s client: it has none of the layouts %s\n", lang, strings.Join(sf.conns, ","))
			continue
		}
		if lang == "go" {
			m, err := goConns(c.conns)
			if err != nil {
				return nil, err
			}
			c.goConns = m
		}
		out = append(out, c)
	}
	for _, conn := range sf.conns {
		if !used[conn] {
			return nil, usage.Wrap(fmt.Errorf("--conn: none of the clients %s has the layout %q", strings.Join(sf.clients, ","), conn))
		}
	}
	return out, nil
}

// buildClients finds and builds (if needed) every client of another
// language in clients. With rpclab compare (sf.clients) a client that does
// not build is reported and left out, and its error returned beside the
// clients that remain; otherwise the first error ends the run.
func buildClients(ctx context.Context, sf *sweepFlags, clients []labClient, stderr io.Writer) ([]labClient, error) {
	var out []labClient
	var errs []error
	for _, c := range clients {
		if c.lang != "go" {
			e, err := buildClient(ctx, sf, c, stderr)
			if err != nil {
				if len(sf.clients) == 0 || ctx.Err() != nil {
					return nil, err
				}
				fmt.Fprintf(stderr, "rpclab: leaving out the %s client: %v\n", c.lang, err)
				errs = append(errs, fmt.Errorf("%s client: %w", c.lang, err))
				continue
			}
			c.ext = e
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

func buildClient(ctx context.Context, sf *sweepFlags, c labClient, stderr io.Writer) (*extclient.External, error) {
	fmt.Fprintf(stderr, "rpclab: building the %s client if needed\n", c.lang)
	return buildExternal(ctx, sf.clientsDir, c.lang, c.conns, stderr)
}

// buildExternal finds clients/<lang> under clientsDir (by default the
// clients/ folder above the working directory or the executable) and
// builds it if it is out of date.
func buildExternal(ctx context.Context, clientsDir, lang string, conns []string, stderr io.Writer) (*extclient.External, error) {
	if clientsDir == "" {
		d, err := extclient.FindClientsDir()
		if err != nil {
			return nil, err
		}
		clientsDir = d
	}
	e, err := extclient.NewExternal(clientsDir, lang, conns, stderr)
	if err != nil {
		return nil, err
	}
	if err := e.Build(ctx); err != nil {
		return nil, err
	}
	return e, nil
}
