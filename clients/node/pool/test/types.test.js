// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// index.d.ts checked by tsc (typescript, a devDependency of clients/node):
// test/types.ts uses the pool as a TypeScript user does, and its
// @ts-expect-error lines fail the check if the types stop refusing what they
// must refuse (no credentials, an unknown policy).

'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { test } = require('node:test');

test('index.d.ts type-checks with tsc', () => {
  const tsc = path.resolve(__dirname, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
  let out = '';
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(__dirname, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    out = `${err.stdout}${err.stderr}`;
  }
  assert.equal(out, '', `tsc found errors:\n${out}`);
});
