// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// ESLint's flat config for the Node client (scripts/vet.sh runs it):
// @eslint/js's recommended rules on CommonJS for Node, for the client and
// the pool library in pool/ alike.

'use strict';

const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  { ignores: ['node_modules/', 'pool/node_modules/'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', ecmaVersion: 2022, globals: globals.node },
  },
];
