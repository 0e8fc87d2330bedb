'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { greet, slugify } = require('../src/index');

test('greet greets', () => {
  assert.strictEqual(greet('Ada'), 'Hello, Ada!');
});

test('greet needs a name', () => {
  assert.throws(() => greet(''), /required/);
});

test('slugify', () => {
  assert.strictEqual(slugify('  Hello, World! '), 'hello-world');
});
